package catalogue

import (
	"fmt"
	"testing"
)

// TestModuleLookup: Module finds every module of a catalogue sorted by
// name (binary search) and of one that is not (a scan), and nothing else.
func TestModuleLookup(t *testing.T) {
	sorted, shuffled := &Catalogue{}, &Catalogue{}
	for i := range 40 {
		sorted.Modules = append(sorted.Modules, &Module{Name: fmt.Sprintf("m-%03d", 2*i)})
		shuffled.Modules = append(shuffled.Modules, &Module{Name: fmt.Sprintf("m-%03d", 2*((i*13)%40))})
	}
	for _, c := range []*Catalogue{sorted, shuffled} {
		for _, m := range c.Modules {
			if got := c.Module(m.Name); got != m {
				t.Errorf("Module(%q) = %v, want it", m.Name, got)
			}
		}
		for _, missing := range []string{"m-001", "m-079", "", "z"} {
			if got := c.Module(missing); got != nil {
				t.Errorf("Module(%q) = %v, want nil", missing, got)
			}
		}
	}
}
