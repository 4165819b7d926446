package server

import "github.com/agentsync/agentsync/server/internal/api"

// LoadedOf is the number of sessions s holds in memory (for tests).
func LoadedOf(s *Server) int { return s.mgr.Loaded() }

// Resolved is l with its defaults applied, as New uses it (for tests).
type Resolved = resolved

// Resolve is l.resolve() (for tests).
func Resolve(l Limits) Resolved { return l.resolve() }

// Client is the API's limits per client (for tests).
func (r resolved) Client() api.Limits { return r.client }
