package model

import "sort"

// DefaultName is the scripted model's name and the default of new sessions.
const DefaultName = "scripted"

// Registry maps model names to providers.
type Registry map[string]Provider

// Names lists the registry's model names, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
