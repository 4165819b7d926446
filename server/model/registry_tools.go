package model

import (
	"fmt"
	"sort"
)

// ToolRegistry holds the tools a server offers, by name: the built-ins,
// the demo tools and those of MCP servers.
type ToolRegistry struct {
	byName map[string]Tool
	specs  []ToolSpec // in the order added: the order the model sees
}

// NewToolRegistry holds tools; two with one name are an error.
func NewToolRegistry(tools ...Tool) (*ToolRegistry, error) {
	r := &ToolRegistry{byName: map[string]Tool{}}
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add registers t; its name must be new.
func (r *ToolRegistry) Add(t Tool) error {
	spec := t.Spec()
	if spec.Name == "" {
		return fmt.Errorf("tool without a name")
	}
	if _, dup := r.byName[spec.Name]; dup {
		return fmt.Errorf("two tools are named %q", spec.Name)
	}
	r.byName[spec.Name] = t
	r.specs = append(r.specs, spec)
	return nil
}

// Get is the tool named name, or nil.
func (r *ToolRegistry) Get(name string) Tool { return r.byName[name] }

// Specs describe every tool, in the order added.
func (r *ToolRegistry) Specs() []ToolSpec { return r.specs }

// Names lists the tools' names, sorted.
func (r *ToolRegistry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
