package main

import (
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
)

// runUI runs the interactive UI until the user quits.
func runUI(o options) error {
	dark := o.theme != "light"
	if o.theme == "auto" {
		dark = lipgloss.HasDarkBackground()
	}
	noColor := os.Getenv("NO_COLOR") != ""
	th := newTheme(os.Stdout, dark, noColor)
	m := newModel(liveBackend{o}, th, o.url)
	m.startID = o.session
	p := tea.NewProgram(m, tea.WithAltScreen())
	m.send = p.Send
	_, err := p.Run()
	if m.c != nil {
		_ = m.c.Close()
	}
	return err
}
