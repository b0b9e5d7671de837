package resolve

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/lock"
)

// follow writes advice a into a copy of m, the person's words where the
// advice has a placeholder.
func follow(t *testing.T, m *catalogue.Module, a Advice) *catalogue.Module {
	t.Helper()
	c := *m
	for _, s := range a.Set {
		v := s.Value
		if strings.HasPrefix(v, "<") {
			v = "the words of " + s.Attr
		}
		switch s.Attr {
		case "pin":
			p, msg := catalogue.ParsePin(v)
			if msg != "" {
				t.Fatalf("advice %q: pin %q: %s", a, v, msg)
			}
			c.Pin = p
		case "policy":
			c.Policy = catalogue.Policy(v)
		case "allow_downgrade":
			c.AllowDowngrade = v
		case "restore":
			c.Restore = v
		default:
			t.Fatalf("advice %q: an attribute the test does not write", a)
		}
	}
	return &c
}

// sameRefusal reports whether two refusals refuse the same thing: the
// same kind, against the same floor, of the same image.
func sameRefusal(a, b *Refusal) bool {
	return a.Kind == b.Kind && a.Floor.Where() == b.Floor.Where() && a.Chosen.Digest == b.Chosen.Digest && a.Floor.Image.Digest == b.Floor.Image.Digest
}

// TestAdviceDecides: in every refusal of a false tag claim (a pin, a
// lock entry or a host that calls 1.22.6's unlabelled content "1.30.0"),
// and of a plain downgrade, the advice writes no claim pin disbelieved,
// and each piece of it, written into the module, is accepted: what it
// pins is locked, or the words it adds accept what cannot be ordered.
func TestAdviceDecides(t *testing.T) {
	reg, imgs := unlabelledFleet()
	lie := imgs["1.22.6"]
	claim := "1.30.0@" + lie.Digest
	lyingEntry := func(policy lock.Policy) *lock.Lock {
		return &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: policy, Image: repo, Tag: "1.30.0", Version: "1.30.0", Digest: lie.Digest, Source: "pin"}}}
	}
	labelled := newFakeRegistry(repo, "1.22.6/2024-12-12+1.22.6", "1.27.3/2026-09-01+1.27.3")
	for _, c := range []struct {
		name string
		reg  Registry
		m    *catalogue.Module
		old  *lock.Lock
		runs []run
	}{
		{"exact pin, a false tag", reg, &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.30.0", lie)}, nil,
			[]run{{host: "host-0", word: "1.25.0"}}},
		{"at-least-running pin, a false tag", reg, &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, Pin: pinOf("1.30.0", lie)}, nil,
			[]run{{host: "host-0", word: "1.25.0"}}},
		{"one_way exact pin, a false tag", reg, &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, OneWay: true, Pin: pinOf("1.30.0", lie)}, nil,
			[]run{{host: "host-0", word: "1.25.0"}}},
		{"a lock entry with a false tag, no pin", reg, &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}, lyingEntry("at-least-running"),
			[]run{{host: "host-0", word: "1.25.0"}}},
		{"a lock entry with a false tag, a true pin", reg, &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning, Pin: pinOf("1.22.6", lie)}, lyingEntry("at-least-running"),
			[]run{{host: "host-0", word: "1.25.0"}}},
		{"a lock entry with a false tag, exact", reg, &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, Pin: pinOf("1.22.6", lie)}, lyingEntry("exact"),
			[]run{{host: "host-0", word: "1.25.0"}}},
		{"a lock entry with a false tag, track-upstream", reg, &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.TrackUpstream}, lyingEntry("track-upstream"), nil},
		{"a plain downgrade, exact", labelled, &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.Exact, OneWay: true, Pin: pinOf("1.22.6", labelled.byTag["1.22.6"])}, nil,
			[]run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3"}}},
	} {
		t.Run(c.name, func(t *testing.T) { adviceDecides(t, c.reg, c.m, c.old, observed(c.m, c.runs, nil), claim) })
	}

	// host-0 runs 1.22.6's content under a tag given on the host, 1.30.0,
	// which the registry does not hold; host-1 runs 1.25.0.
	reg, _ = unlabelledFleet()
	delete(reg.heads, "1.30.0")
	delete(reg.Registry.(*fakeRegistry).byTag, "1.30.0")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	seen := observed(m, []run{{host: "host-0", word: "1.30.0"}, {host: "host-1", word: "1.25.0"}}, nil)
	seen.Snapshots["host-0"].Images[0].RepoDigests = []string{repo + "@" + lie.Digest}
	t.Run("a host's false tag", func(t *testing.T) { adviceDecides(t, reg, m, nil, seen, claim) })
}

// adviceDecides resolves m, which must be refused with advice that does
// not write claim, and follows each piece of the advice: each must be
// accepted, and lock no claim pin disbelieved.
func adviceDecides(t *testing.T, reg Registry, m *catalogue.Module, old *lock.Lock, seen observe.Observed, claim string) {
	ctx := context.Background()
	resolve := func(m *catalogue.Module) *Decision {
		return Resolve(ctx, Input{Catalogue: &catalogue.Catalogue{Modules: []*catalogue.Module{m}}, Old: old, Observed: seen,
			Registry: func(string) Registry { return reg }, Now: reviewNow}).Decisions[0]
	}
	d := resolve(m)
	if d.Refusal() == nil || len(d.Refusal().Advice) == 0 {
		t.Fatalf("want a refusal with advice: new %v, refusal %v, err %v", d.New(), d.Refusal(), d.Err())
	}
	text := d.Refusal().Error()
	t.Log(text)
	tag, digest, _ := strings.Cut(claim, "@")
	if i := strings.Index(text, "to decide"); i < 0 || strings.Contains(text[i:], claim) || strings.Contains(text[i:], `"`+tag+"@"+digest[:19]) {
		t.Errorf("the advice writes the claim %s pin disbelieved:\n%s", claim, text)
	}
	for _, a := range d.Refusal().Advice {
		nd := resolve(follow(t, m, a))
		switch {
		case nd.Err() != nil:
			t.Errorf("following %q: %v", a, nd.Err())
		case nd.Refusal() != nil && sameRefusal(nd.Refusal(), d.Refusal()):
			t.Errorf("following %q: the same refusal:\n%s", a, nd.Refusal())
		case nd.Refusal() != nil:
			t.Errorf("following %q: refused again:\n%s", a, nd.Refusal())
		case nd.New().Tag == tag && nd.New().Digest == digest:
			t.Errorf("following %q: the lock writes the claim pin disbelieved: %+v", a, nd.New())
		}
	}
}

// TestJudgeAdviceDecides: an admission of svc:1.30.0@<1.22.6's digest>
// (unlabelled), or of a floor's false tag, is refused; each reference the
// refusal says to deploy writes no tag pin disbelieved, and is allowed.
func TestJudgeAdviceDecides(t *testing.T) {
	ctx := context.Background()
	reg, imgs := unlabelledFleet()
	lie := imgs["1.22.6"]
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	entry := &lock.Lock{Modules: []*lock.Module{{Name: "svc", Policy: "at-least-running", Image: repo, Tag: "1.30.0", Version: "1.30.0", Digest: lie.Digest, Source: "pin"}}}
	for _, c := range []struct {
		name string
		old  *lock.Lock
		ref  image.Image
	}{
		{"a reference with a false tag", nil, image.Image{Repository: repo, Tag: "1.30.0", Digest: lie.Digest}},
		{"a lock entry with a false tag", entry, image.Image{Repository: repo, Tag: "1.22.6", Digest: lie.Digest}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := inputOf(m, reg, c.old, observed(m, []run{{host: "host-0", word: "1.25.0"}}, nil))
			j, err := Judge(ctx, in, m, c.ref, Override{How: "annotate it"})
			if err != nil || j.Allowed() {
				t.Fatalf("judge %s: %+v, %v", c.ref.Ref(), j, err)
			}
			text := j.Refusal.Error()
			t.Log(text)
			to := text[strings.Index(text, "to decide"):]
			if strings.Contains(to, "1.30.0@"+lie.Digest) {
				t.Errorf("the advice writes the claim 1.30.0@%s pin disbelieved:\n%s", lie.Digest, text)
			}
			deploys := regexp.MustCompile(`deploy (\S+?)[;,]?(\s|$)`).FindAllStringSubmatch(to, -1)
			if len(deploys) == 0 {
				t.Fatalf("nothing to deploy in:\n%s", text)
			}
			for _, dep := range deploys {
				ref := dep[1]
				img := image.Image{}
				rest, digest, _ := strings.Cut(ref, "@")
				img.Digest = digest
				if i := strings.LastIndex(rest, ":"); i > strings.LastIndex(rest, "/") {
					img.Repository, img.Tag = rest[:i], rest[i+1:]
				} else {
					img.Repository = rest
				}
				ov := Override{}
				if strings.Contains(to[strings.Index(to, ref):], ref+" and annotate it") {
					ov.Downgrade = "the words the override asks for"
				}
				if j, err := Judge(ctx, in, m, img, ov); err != nil || !j.Allowed() {
					t.Errorf("deploying %s, as it says: %v %v", ref, j.Refusal, err)
				}
			}
		})
	}
}

// TestJudgeNotServed: a reference its registry has no image by (a tag it
// does not have, a digest it does not serve) is refused as not served,
// naming the reference with its tag and what the registry lacks; never
// an image ID, an override or versioning. What it says to deploy is
// allowed. A reference of another repository is refused for that.
func TestJudgeNotServed(t *testing.T) {
	ctx := context.Background()
	reg := newFakeRegistry(repo, "1.22.6/2024-12-12+1.22.6", "1.27.3/2026-09-01+1.27.3")
	m := &catalogue.Module{Name: "svc", Image: repo, Policy: catalogue.AtLeastRunning}
	in := inputOf(m, reg, nil, observed(m, []run{{host: "host-0", word: "1.27.3/2026-09-01+1.27.3"}}, nil))
	missing := "sha256:" + strings.Repeat("5", 64)
	for _, c := range []struct {
		ref  image.Image
		says string
	}{
		{image.Image{Repository: repo, Tag: "9.9.9"}, "registry.example.org has no image " + repo + ":9.9.9 (no tag 9.9.9 in team/svc): it cannot be ordered against what host-0/svc runs"},
		{image.Image{Repository: repo, Digest: missing}, "registry.example.org has no image " + repo + "@" + missing + " (no manifest " + missing + " in team/svc)"},
		{image.Image{Repository: repo, Tag: "9.9.9", Digest: missing}, "registry.example.org has no image " + repo + ":9.9.9@" + missing + " (no manifest "},
	} {
		j, err := Judge(ctx, in, m, c.ref, Override{How: "annotate it"})
		if err != nil || j.Allowed() || !j.NotServed || j.Refusal.Kind != KindNotServed || j.Image.Tag != c.ref.Tag {
			t.Fatalf("%s: %+v %v, want refused as not served, the tag kept", c.ref.Ref(), j, err)
		}
		text := j.Refusal.Error()
		if !strings.Contains(text, c.says) {
			t.Errorf("%s: the refusal does not say %q:\n%s", c.ref.Ref(), c.says, text)
		}
		for _, not := range []string{"image ID", "annotate it", "versioning", "allow_downgrade"} {
			if strings.Contains(text, not) {
				t.Errorf("%s: the refusal speaks of %q:\n%s", c.ref.Ref(), not, text)
			}
		}
		dep := regexp.MustCompile(`deploy (\S+):(\S+)@(\S+)$`).FindStringSubmatch(text)
		if dep == nil {
			t.Fatalf("nothing to deploy in:\n%s", text)
		}
		if j, err := Judge(ctx, in, m, image.Image{Repository: dep[1], Tag: dep[2], Digest: dep[3]}, Override{}); err != nil || !j.Allowed() {
			t.Errorf("deploying %s:%s, as it says: %v %v", dep[1], dep[2], j.Refusal, err)
		}
	}
	other := image.Image{Repository: "registry.example.org/other/svc", Tag: "9.9.9"}
	if j, err := Judge(ctx, in, m, other, Override{}); err != nil || j.Allowed() || j.Refusal.Kind == KindNotServed || !strings.Contains(j.Refusal.Error(), "not from the module's repository") {
		t.Errorf("%s: %v %v, want refused as another repository's", other.Ref(), j.Refusal, err)
	}
}
