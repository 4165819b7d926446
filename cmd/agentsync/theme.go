package main

import (
	"io"
	"os"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// theme holds the UI's styles for a dark or light terminal, or none at all
// (NO_COLOR): every style comes from one lipgloss renderer, whose colour
// profile decides whether any escape sequence is written.
type theme struct {
	dark    bool
	noColor bool
	profile termenv.Profile

	user, agent, dim, accent, ok, warn, bad, tool, reasoning, cursor, status lipgloss.Style
}

// newTheme makes the styles for out. noColor (NO_COLOR set) writes text
// with no escape sequences at all.
func newTheme(out io.Writer, dark, noColor bool) theme {
	r := lipgloss.NewRenderer(out)
	r.SetHasDarkBackground(dark)
	profile := termenv.TrueColor
	if f, ok := out.(*os.File); ok {
		profile = termenv.NewOutput(f).EnvColorProfile()
	}
	if noColor {
		profile = termenv.Ascii
	}
	r.SetColorProfile(profile)
	th := theme{dark: dark, noColor: noColor, profile: profile}
	pick := func(darkC, lightC string) lipgloss.Color {
		if dark {
			return lipgloss.Color(darkC)
		}
		return lipgloss.Color(lightC)
	}
	s := r.NewStyle
	th.user = s().Bold(true).Foreground(pick("#7aa2f7", "#1d4ed8"))
	th.agent = s()
	th.dim = s().Foreground(pick("#737aa2", "#6b7280"))
	th.accent = s().Bold(true).Foreground(pick("#bb9af7", "#7c3aed"))
	th.ok = s().Foreground(pick("#9ece6a", "#15803d"))
	th.warn = s().Foreground(pick("#e0af68", "#b45309"))
	th.bad = s().Bold(true).Foreground(pick("#f7768e", "#b91c1c"))
	th.tool = s().Foreground(pick("#7dcfff", "#0e7490"))
	th.reasoning = s().Italic(true).Foreground(pick("#737aa2", "#6b7280"))
	th.cursor = s().Bold(true).Foreground(pick("#bb9af7", "#7c3aed"))
	th.status = s().Foreground(pick("#a9b1d6", "#374151"))
	return th
}

// markdown makes the glamour renderer of a finished text for a wrap width.
func (th theme) markdown(width int) (*glamour.TermRenderer, error) {
	// NO_COLOR: the dark style, its escape sequences stripped (renderer.
	// markdown); the notty style would keep the markdown's ** and `.
	style := "dark"
	if !th.dark {
		style = "light"
	}
	return glamour.NewTermRenderer(
		glamour.WithStandardStyle(style),
		glamour.WithColorProfile(th.profile),
		glamour.WithWordWrap(width),
		glamour.WithEmoji(),
	)
}
