package scripted

import (
	"fmt"
	"strconv"
	"strings"
)

// evalExpr evaluates an arithmetic expression of numbers, + - * /, unary minus
// and parentheses: enough for the calculator demo tool.
func evalExpr(expr string) (float64, error) {
	p := &parser{s: strings.ReplaceAll(expr, " ", "")}
	if p.s == "" {
		return 0, fmt.Errorf("calculator: empty expression")
	}
	v, err := p.sum()
	if err != nil {
		return 0, err
	}
	if p.i != len(p.s) {
		return 0, fmt.Errorf("calculator: unexpected %q at %d", p.s[p.i:], p.i)
	}
	return v, nil
}

type parser struct {
	s     string
	i     int
	depth int
}

func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *parser) sum() (float64, error) {
	v, err := p.product()
	for err == nil && (p.peek() == '+' || p.peek() == '-') {
		op := p.peek()
		p.i++
		var r float64
		if r, err = p.product(); err == nil {
			if op == '+' {
				v += r
			} else {
				v -= r
			}
		}
	}
	return v, err
}

func (p *parser) product() (float64, error) {
	v, err := p.unary()
	for err == nil && (p.peek() == '*' || p.peek() == '/') {
		op := p.peek()
		p.i++
		var r float64
		if r, err = p.unary(); err == nil {
			if op == '*' {
				v *= r
			} else if r == 0 {
				err = fmt.Errorf("calculator: division by zero")
			} else {
				v /= r
			}
		}
	}
	return v, err
}

func (p *parser) unary() (float64, error) {
	if p.peek() == '-' {
		p.i++
		v, err := p.unary()
		return -v, err
	}
	if p.peek() == '(' {
		// Bound nesting so hostile input cannot exhaust the stack.
		if p.depth++; p.depth > 64 {
			return 0, fmt.Errorf("calculator: nested too deep")
		}
		p.i++
		v, err := p.sum()
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			return 0, fmt.Errorf("calculator: missing ) at %d", p.i)
		}
		p.i++
		p.depth--
		return v, nil
	}
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '.') {
		p.i++
	}
	if start == p.i {
		return 0, fmt.Errorf("calculator: number expected at %d", start)
	}
	return strconv.ParseFloat(p.s[start:p.i], 64)
}
