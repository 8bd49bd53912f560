package shell

import "mvdan.cc/sh/v3/syntax"

// scope is what the shell carries along a script: variables assigned,
// functions and aliases defined, positional parameters. A child shell (a
// subshell, a side of a pipe, a substitution) gets a scope of its own over
// its parent's, so what it sets does not outlive it; lookups walk up.
type scope struct {
	parent        *scope
	vars          map[string]arg
	funcs         map[string]*syntax.FuncDecl // nil value: unset here
	aliases       map[string]*string          // nil value: unaliased here
	positional    []arg
	hasPositional bool
}

// lookup is a variable's value: ok is false when the script never set it
// (its value comes from the environment, which only the running shell
// knows).
func (s *scope) lookup(name string) (arg, bool) {
	for sc := s; sc != nil; sc = sc.parent {
		if v, ok := sc.vars[name]; ok {
			return v, true
		}
	}
	return arg{}, false
}

// setVar sets a variable here; a value we cannot know is known false.
func (s *scope) setVar(name string, v arg) {
	if s.vars == nil {
		s.vars = map[string]arg{}
	}
	s.vars[name] = arg{val: v.val, known: v.known}
}

func (s *scope) setFunc(name string, fn *syntax.FuncDecl) {
	if s.funcs == nil {
		s.funcs = map[string]*syntax.FuncDecl{}
	}
	s.funcs[name] = fn
}

func (s *scope) function(name string) (*syntax.FuncDecl, bool) {
	for sc := s; sc != nil; sc = sc.parent {
		if fn, ok := sc.funcs[name]; ok {
			return fn, fn != nil
		}
	}
	return nil, false
}

func (s *scope) setAlias(name string, def *string) {
	if s.aliases == nil {
		s.aliases = map[string]*string{}
	}
	s.aliases[name] = def
}

func (s *scope) alias(name string) (string, bool) {
	for sc := s; sc != nil; sc = sc.parent {
		if def, ok := sc.aliases[name]; ok {
			if def == nil {
				return "", false
			}
			return *def, true
		}
	}
	return "", false
}

// params are the positional parameters in force ($1, $2, …), and whether
// any are known (outside a function we followed they come from the
// running shell).
func (s *scope) params() ([]arg, bool) {
	for sc := s; sc != nil; sc = sc.parent {
		if sc.hasPositional {
			return sc.positional, true
		}
	}
	return nil, false
}
