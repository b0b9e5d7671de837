package lock

import (
	"fmt"
	"testing"
)

// TestModuleLookup: Module finds every entry, in a lock sorted by name
// (binary search) and in one that is not (a scan), and nothing else.
func TestModuleLookup(t *testing.T) {
	sorted := &Lock{}
	for i := range 50 {
		sorted.Modules = append(sorted.Modules, &Module{Name: fmt.Sprintf("m-%03d", 2*i)})
	}
	shuffled := &Lock{}
	for i := range 50 {
		shuffled.Modules = append(shuffled.Modules, &Module{Name: fmt.Sprintf("m-%03d", 2*((i*17)%50))})
	}
	for _, l := range []*Lock{sorted, shuffled} {
		for _, m := range l.Modules {
			if got := l.Module(m.Name); got != m {
				t.Errorf("Module(%q) = %v, want its entry", m.Name, got)
			}
		}
		for _, missing := range []string{"m-001", "m-099", "", "m-999", "a"} {
			if got := l.Module(missing); got != nil {
				t.Errorf("Module(%q) = %v, want nil", missing, got)
			}
		}
	}
	var none *Lock
	if none.Module("x") != nil {
		t.Error("nil lock found a module")
	}
}
