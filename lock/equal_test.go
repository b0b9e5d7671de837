package lock

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// formatsAlike is Equal's oracle: two locks are equal exactly when Format
// writes them to the same bytes.
func formatsAlike(a, b *Lock) bool { return string(Format(a)) == string(Format(b)) }

// checkEqual asserts Equal(a, b) == want, both ways round, and that the
// oracle agrees with want, so that a wrong expectation fails as loudly as
// a wrong Equal.
func checkEqual(t *testing.T, a, b *Lock, want bool) {
	t.Helper()
	if msg := equalVerdict(a, b, Format(a), want); msg != "" {
		t.Error(msg)
	}
}

// equalVerdict is checkEqual's finding, "" when all is well; fa is
// Format(a), formatted once for the many b compared with a.
func equalVerdict(a, b *Lock, fa []byte, want bool) string {
	if got := string(fa) == string(Format(b)); got != want {
		return fmt.Sprintf("the test is wrong: Format says the locks are equal=%v, the test expects %v\n%s\n%s", got, want, Format(a), Format(b))
	}
	if got := Equal(a, b); got != want {
		return fmt.Sprintf("Equal(a, b) = %v, Format says %v\n%s\n%s", got, want, Format(a), Format(b))
	}
	if got := Equal(b, a); got != want {
		return fmt.Sprintf("Equal(b, a) = %v, Format says %v", got, want)
	}
	return ""
}

func TestEqual(t *testing.T) {
	module := func(edit func(*Module)) *Lock {
		l := sample()
		edit(l.Module("forge"))
		return l
	}
	// "créé" with precomposed accents (NFC) and with combining ones (NFD).
	nfc, nfd := "cr\u00e9\u00e9", "cre\u0301e\u0301"
	created := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		a, b *Lock
		want bool
	}{
		{"nil, nil", nil, nil, true},
		{"nil, empty", nil, &Lock{}, true},
		{"empty, empty list", &Lock{}, &Lock{Modules: []*Module{}}, true},
		{"nil, one module", nil, sample(), false},
		{"same", sample(), sample(), true},
		{"modules and observations reordered", sample(), sample().normalised(), true},
		{"a module less", sample(), &Lock{Modules: sample().Modules[1:]}, false},
		{"an observation less", sample(), module(func(m *Module) { m.Observed = m.Observed[1:] }), false},
		{"an observation twice", sample(), module(func(m *Module) { m.Observed = append(m.Observed, m.Observed[0]) }), false},
		{"nil and empty platforms", module(func(m *Module) { m.Platforms = nil }), module(func(m *Module) { m.Platforms = map[string]string{} }), true},
		{"a platform with an empty digest", module(func(m *Module) { m.Platforms = nil }), module(func(m *Module) { m.Platforms = map[string]string{"linux/amd64": ""} }), false},
		{"platform digest", module(func(m *Module) { m.Platforms = map[string]string{"linux/amd64": dA} }), module(func(m *Module) { m.Platforms = map[string]string{"linux/amd64": dB} }), false},
		{"created in another zone", module(func(m *Module) { m.Created = created }), module(func(m *Module) { m.Created = created.In(time.FixedZone("CEST", 2*3600)) }), true},
		{"created within the second", module(func(m *Module) { m.Created = created }), module(func(m *Module) { m.Created = created.Add(999 * time.Millisecond) }), true},
		{"created a second later", module(func(m *Module) { m.Created = created }), module(func(m *Module) { m.Created = created.Add(time.Second) }), false},
		{"created unset and at the zero second", module(func(m *Module) { m.Created = time.Time{} }), module(func(m *Module) { m.Created = time.Time{}.Add(time.Millisecond) }), false},
		{"observation created within the second", module(func(m *Module) { m.Observed[0].Created = created }), module(func(m *Module) { m.Observed[0].Created = created.Add(time.Nanosecond) }), true},
		{"reason in NFC and NFD", module(func(m *Module) { m.Reason = nfc }), module(func(m *Module) { m.Reason = nfd }), true},
		{"platform key in NFC and NFD", module(func(m *Module) { m.Platforms = map[string]string{nfc: dA} }), module(func(m *Module) { m.Platforms = map[string]string{nfd: dA} }), true},
		{"invalid UTF-8 both ways", module(func(m *Module) { m.Reason = "\xff" }), module(func(m *Module) { m.Reason = "\xfe" }), true},
		{"non-ASCII text that differs", module(func(m *Module) { m.Reason = nfc }), module(func(m *Module) { m.Reason = nfc + "!" }), false},
		{"reason", module(func(m *Module) { m.Reason = "x" }), module(func(m *Module) { m.Reason = "y" }), false},
		{"reason unset", module(func(m *Module) { m.Reason = "" }), module(func(m *Module) { m.Reason = "y" }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkEqual(t, tt.a, tt.b, tt.want) })
	}
}

// TestModuleEqual: a module equals another exactly when the two format
// alike as the one module of a lock.
func TestModuleEqual(t *testing.T) {
	one := func(m *Module) *Lock { return &Lock{Modules: []*Module{m}} }
	forge := sample().Module("forge")
	reversed := *forge
	reversed.Observed = slices.Clone(forge.Observed)
	slices.Reverse(reversed.Observed)
	other := *forge
	other.Rule = "created"
	for _, tt := range []struct {
		name string
		a, b *Module
		want bool
	}{
		{"itself", forge, forge, true},
		{"observations reversed", forge, &reversed, true},
		{"rule", forge, &other, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := tt.a.Equal(tt.b), formatsAlike(one(tt.a), one(tt.b)); got != tt.want || want != tt.want {
				t.Errorf("Equal = %v, Format says %v, want %v", got, want, tt.want)
			}
		})
	}
	var none *Module
	if !none.Equal(nil) || none.Equal(forge) || forge.Equal(nil) {
		t.Error("a nil module equals only a nil one")
	}
}

// TestEqualProperty builds random locks and checks that reordering their
// modules and observations keeps them equal, and that changing any one
// field of a module or an observation, found by reflection so that a field
// added later is covered or fails here, makes them unequal; Format is the
// oracle for every verdict.
func TestEqualProperty(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 30
	}
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed, 13))
		l := randomLock(r)
		fl := Format(l)

		shuffled := cloneLock(l)
		r.Shuffle(len(shuffled.Modules), func(i, j int) {
			shuffled.Modules[i], shuffled.Modules[j] = shuffled.Modules[j], shuffled.Modules[i]
		})
		for _, m := range shuffled.Modules {
			r.Shuffle(len(m.Observed), func(i, j int) { m.Observed[i], m.Observed[j] = m.Observed[j], m.Observed[i] })
		}
		if msg := equalVerdict(l, shuffled, fl, true); msg != "" {
			t.Errorf("seed %d, reordered: %s", seed, msg)
		}

		for mi := range l.Modules {
			mt := reflect.TypeFor[Module]()
			for f := range mt.NumField() {
				field := mt.Field(f)
				if field.Name == "Observed" || field.Name == "DeclRange" {
					continue // edited below, observation by observation; not written
				}
				edited := cloneLock(l)
				editField(t, reflect.ValueOf(edited.Modules[mi]).Elem().Field(f), field)
				if msg := equalVerdict(l, edited, fl, false); msg != "" {
					t.Errorf("seed %d, module %d, %s changed: %s", seed, mi, field.Name, msg)
				}
			}
			ot := reflect.TypeFor[Observation]()
			for oi := range l.Modules[mi].Observed {
				for f := range ot.NumField() {
					edited := cloneLock(l)
					editField(t, reflect.ValueOf(&edited.Modules[mi].Observed[oi]).Elem().Field(f), ot.Field(f))
					if msg := equalVerdict(l, edited, fl, false); msg != "" {
						t.Errorf("seed %d, module %d, observation %d, %s changed: %s", seed, mi, oi, ot.Field(f).Name, msg)
					}
				}
			}
		}
	}
}

// editField changes v, a field of a Module or an Observation, so that
// Format must write it differently.
func editField(t *testing.T, v reflect.Value, f reflect.StructField) {
	t.Helper()
	if v.Kind() == reflect.String {
		// A string, or one of the lock's named values (Policy, Source, Rule,
		// Method): Format writes each as its text.
		v.SetString(v.String() + "~")
		return
	}
	switch x := v.Interface().(type) {
	case time.Time:
		if x.IsZero() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
		} else {
			v.Set(reflect.ValueOf(x.Add(time.Second)))
		}
	case []string:
		// One tag more, that no other tag equals.
		v.Set(reflect.ValueOf(append(slices.Clone(x), "edited~")))
	case *Promotion:
		// Provenance where there was none; another environment where
		// there was.
		if x == nil {
			v.Set(reflect.ValueOf(&Promotion{From: "edited", Release: dA}))
		} else {
			c := *x
			c.From += "~"
			v.Set(reflect.ValueOf(&c))
		}
	case map[string]string:
		// A new platform: one key more is one line more.
		m := map[string]string{"linux/riscv64": dA}
		for k, d := range x {
			m[k] = d
		}
		v.Set(reflect.ValueOf(m))
	default:
		t.Fatalf("field %s of type %s has no edit here: teach editField, and Equal, about it", f.Name, f.Type)
	}
}

// randomLock is a lock of up to five modules, each with up to four
// observations drawn from few hosts and containers, so that observations
// often tie on host and container and sort by the image; optional fields
// are as often empty as set.
func randomLock(r *rand.Rand) *Lock {
	pick := func(options ...string) string { return options[r.IntN(len(options))] }
	maybe := func(s string) string {
		if r.IntN(2) == 0 {
			return ""
		}
		return s
	}
	date := func() time.Time {
		if r.IntN(3) == 0 {
			return time.Time{}
		}
		return time.Date(2026, time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), 0, r.IntN(60), 0, time.UTC)
	}
	l := &Lock{Hosts: [][]string{nil, {"mesh-1"}, {"mesh-2", "mesh-1", "mesh-2"}}[r.IntN(3)]}
	for _, name := range r.Perm(8)[:r.IntN(6)] {
		m := &Module{
			Name:           fmt.Sprintf("app-%d", name),
			Policy:         Policies[r.IntN(len(Policies))],
			Image:          fmt.Sprintf("registry.example.org/app-%d", name),
			Tag:            maybe(pick("1.0", "v1.2", "latest")),
			Tags:           [][]string{nil, {"1.0"}, {"latest", "1.0"}, {"1.0", "1.0"}}[r.IntN(4)],
			Digest:         pick(dA, dB, dC),
			Config:         maybe(pick(dA, dB, dC)),
			Version:        maybe(pick("1.0.0", "1.2.0")),
			Created:        date(),
			Source:         Sources[r.IntN(len(Sources))],
			Rule:           Rule(maybe(pick("content", "version", "created"))),
			Reason:         maybe(pick("the exact pin", "newest upstream tag", "déjà vu")),
			AllowDowngrade: maybe("a stated reason"),
			Restore:        maybe("backup 2026-11-30"),
			Verified:       Method(maybe("cosign-key")),
			Signer:         maybe("sha256:" + strings.Repeat("f", 64)),
			Signature:      maybe(pick(dA, dB)),
			Hosts:          [][]string{nil, {"mesh-1"}, {"mesh-2", "mesh-1"}, {"mesh-1", "mesh-1"}}[r.IntN(4)],
			Hold:           maybe("a manual pick"),
		}
		if r.IntN(3) == 0 {
			m.Promoted = &Promotion{From: pick("staging", "dev"), Hosts: [][]string{nil, {"s1"}, {"s2", "s1"}}[r.IntN(3)], Since: date(), Release: pick(dA, dB)}
		}
		if r.IntN(3) == 0 {
			m.Platforms = map[string]string{"linux/amd64": pick(dA, dB), "linux/arm64/v8": pick(dB, dC)}
		}
		for range r.IntN(5) {
			m.Observed = append(m.Observed, Observation{
				Host:      pick("mesh-1", "mesh-2"),
				Container: pick("web", "worker"),
				Tag:       maybe(pick("1.0", "latest")),
				Digest:    maybe(pick(dA, dB)),
				ImageID:   maybe(pick(dB, dC)),
				Version:   maybe(pick("1.0.0", "1.2.0")),
				Created:   date(),
			})
		}
		l.Modules = append(l.Modules, m)
	}
	return l
}
