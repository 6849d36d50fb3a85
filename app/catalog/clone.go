package catalog

import "slices"

// clone returns a deep copy of e, so that entries handed to callers never
// share slices with the catalog's own.
func (e Entry) clone() Entry {
	if e.Repository != nil {
		r := *e.Repository
		e.Repository = &r
	}
	e.Remotes = slices.Clone(e.Remotes)
	if e.Packages != nil {
		ps := make([]Package, len(e.Packages))
		for i, p := range e.Packages {
			p.RuntimeArguments = cloneArgs(p.RuntimeArguments)
			p.PackageArguments = cloneArgs(p.PackageArguments)
			if p.EnvironmentVars != nil {
				kvs := make([]KeyValue, len(p.EnvironmentVars))
				for j, kv := range p.EnvironmentVars {
					kv.Choices = slices.Clone(kv.Choices)
					kvs[j] = kv
				}
				p.EnvironmentVars = kvs
			}
			ps[i] = p
		}
		e.Packages = ps
	}
	return e
}

func cloneArgs(args []Argument) []Argument {
	if args == nil {
		return nil
	}
	out := make([]Argument, len(args))
	for i, a := range args {
		a.Choices = slices.Clone(a.Choices)
		out[i] = a
	}
	return out
}
