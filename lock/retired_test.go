package lock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// withRetired is sample() after module "forge" left the catalogue: its
// entry stays as a retired block.
func withRetired() *Lock {
	l := sample()
	for i, m := range l.Modules {
		if m.Name == "forge" {
			l.Retired = append(l.Retired, m)
			l.Modules = append(l.Modules[:i], l.Modules[i+1:]...)
			break
		}
	}
	l.Retired = append(l.Retired, &Module{Name: "cache", Policy: "exact", Image: "registry.example.org/cache/redis", Tag: "7.4.1",
		Digest: dC, Version: "7.4.1", Created: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), Source: SourcePin, Reason: "the exact pin"})
	return l
}

// TestRetiredGolden: retired entries are written after the modules, as
// "retired" blocks with the attributes of a module block, sorted by name;
// they read back whole, by the fast path as by hclparse.
func TestRetiredGolden(t *testing.T) {
	got := Format(withRetired())
	golden := filepath.Join("testdata", "retired.lock.hcl")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("Format (-golden +got):\n%s", diff)
	}
	l, diags := Parse(got, "pin.lock.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if diff := cmp.Diff(withRetired().normalised(), l); diff != "" {
		t.Errorf("parse(format(x)) != x (-want +got):\n%s", diff)
	}
	if !agree(t, got) {
		t.Error("the fast path refused a lock with retired entries that Format wrote")
	}
	if l.RetiredEntry("forge") == nil || l.Module("forge") != nil || l.RetiredEntry("web") != nil {
		t.Errorf("lookups: retired forge %v, module forge %v, retired web %v", l.RetiredEntry("forge"), l.Module("forge"), l.RetiredEntry("web"))
	}
	if !Equal(l, withRetired()) || Equal(l, sample()) {
		t.Error("Equal does not compare retired entries")
	}
}

// TestRetiredWithoutRetiredIsByteIdentical: a lock with no retired entry
// formats as it did before retired entries existed.
func TestRetiredWithoutRetiredIsByteIdentical(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "sample.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	l := sample()
	l.Retired = []*Module{}
	if got := Format(l); string(got) != string(want) {
		t.Errorf("an empty retired list changed the bytes:\n%s", cmp.Diff(string(want), string(got)))
	}
	if strings.Contains(string(want), "retired") {
		t.Fatal("the golden sample holds a retired block")
	}
}

// TestRetiredDuplicate: a module block and a retired block of one name
// are refused with both places named.
func TestRetiredDuplicate(t *testing.T) {
	digest := "sha256:" + strings.Repeat("a", 64)
	src := header + "\n" + moduleText("a", digest) + "\n" + strings.Replace(moduleText("a", digest), "module", "retired", 1)
	if _, ok := parseFast([]byte(src), "pin.lock.hcl"); ok {
		t.Fatal("the fast path accepted a module and a retired entry of one name")
	}
	_, diags := Parse([]byte(src), "pin.lock.hcl")
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Duplicate module in lock") || !strings.Contains(diags.Error(), "pin.lock.hcl:5") {
		t.Errorf("diagnostics %v", diags)
	}
}
