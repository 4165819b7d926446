package model

// DefaultBudget is the context budget of a provider that states none, in
// estimated tokens: what the composer fits in a step's input before older
// turns give way to a summary.
const DefaultBudget = 1_000_000

// Budgeter is a provider with a context budget (estimated tokens).
type Budgeter interface {
	// ContextBudget is the number of estimated tokens of context the
	// composer may send the model in one step.
	ContextBudget() int
}

// BudgetOf is p's context budget, looking through wrappers; a provider
// without one gets DefaultBudget.
func BudgetOf(p Provider) int {
	for {
		if b, ok := p.(Budgeter); ok && b.ContextBudget() > 0 {
			return b.ContextBudget()
		}
		u, ok := p.(interface{ Unwrap() Provider })
		if !ok {
			return DefaultBudget
		}
		p = u.Unwrap()
	}
}

// ImageLimiter is a provider whose API bounds one image's bytes.
type ImageLimiter interface {
	// MaxImageBytes is the largest image, in bytes before base64, that
	// the provider's API takes; 0: no bound of its own.
	MaxImageBytes() int64
}

// MaxImageOf is p's image bound, looking through wrappers; 0: none.
func MaxImageOf(p Provider) int64 {
	for {
		if l, ok := p.(ImageLimiter); ok {
			return l.MaxImageBytes()
		}
		u, ok := p.(interface{ Unwrap() Provider })
		if !ok {
			return 0
		}
		p = u.Unwrap()
	}
}
