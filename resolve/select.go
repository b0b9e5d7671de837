package resolve

import (
	"slices"

	"github.com/pin-tool/pin/internal/catalogue"
)

// selected returns the indexes of the catalogue modules Resolve decides:
// all of them, or those the record names (Record.Only). Every other module's decision is
// filled in here: it keeps its previous entry as it is, and is marked
// Unselected.
func (in Input) selected(p *Plan) []int {
	mods := in.Catalogue.Modules
	var todo []int
	for i, m := range mods {
		if in.Record.Decides(m.Name) {
			todo = append(todo, i)
			continue
		}
		old := in.Old.Module(m.Name)
		p.Decisions[i] = &Decision{Module: m, Old: old, outcome: unselected(old)}
	}
	return todo
}

// UnknownModules returns the names among names that are not modules of c,
// in the order given, each once.
func UnknownModules(c *catalogue.Catalogue, names []string) []string {
	var out []string
	for _, n := range names {
		if c.Module(n) == nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
