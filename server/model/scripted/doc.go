// Package scripted is the deterministic scripted model and its demo tools:
// the last user text picks a scenario (`scenario:NAME key=value...`, see
// Scenarios), so every kind of turn (text, reasoning, tool calls,
// approvals, questions, errors) can be played without an LLM. A server
// without Config.Models offers it alone (Registry), with DemoTools.
package scripted
