package lock

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

var (
	fileSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "hosts"}}, Blocks: []hcl.BlockHeaderSchema{
		{Type: "module", LabelNames: []string{"name"}}, {Type: "retired", LabelNames: []string{"name"}},
	}}
	moduleSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "policy", Required: true}, {Name: "image", Required: true},
			{Name: "tag"}, {Name: "tags"}, {Name: "digest", Required: true}, {Name: "config"},
			{Name: "version"}, {Name: "created"}, {Name: "platforms"},
			{Name: "source", Required: true}, {Name: "rule"}, {Name: "reason"},
			{Name: "allow_downgrade"}, {Name: "restore"},
			{Name: "verified"}, {Name: "signer"}, {Name: "signature"}, {Name: "hosts"},
			{Name: "allow_unverified"}, {Name: "hold"},
		},
		Blocks: []hcl.BlockHeaderSchema{{Type: "observed", LabelNames: []string{"host"}}, {Type: "promoted"}},
	}
	promotedSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "from", Required: true}, {Name: "hosts"}, {Name: "since"}, {Name: "release", Required: true}, {Name: "health"},
	}}
	observedSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
		{Name: "container"}, {Name: "tag"}, {Name: "digest"}, {Name: "image_id"},
		{Name: "version"}, {Name: "created"},
	}}
)

// repair says what works on a lock pin cannot read: pin does not rewrite a
// lock it cannot trust (its entries are floors), so "pin resolve" refuses
// it too until it is restored or corrected.
const repair = `Restore the lockfile from version control (git checkout), or correct this line by hand; "pin resolve" reads no lock it cannot trust, so it cannot rewrite this one. Deleting the module's block also works, but forgets the floor the block recorded.`

// Parse reads a lockfile. Every problem is a diagnostic with its source
// range; the lock returned holds what could be read.
//
// A lock in exactly the layout Format writes is read by a fast path
// (parseFast) that gives the same result in a fraction of the time and
// memory; anything else, and anything wrong, is read by hclparse.
func Parse(src []byte, filename string) (*Lock, hcl.Diagnostics) {
	if l, ok := parseFast(src, filename); ok {
		return l, nil
	}
	return parseHCL(src, filename)
}

// parseHCL is Parse through hclparse: the reference, and the only path that
// writes diagnostics.
func parseHCL(src []byte, filename string) (*Lock, hcl.Diagnostics) {
	l := &Lock{}
	file, diags := hclparse.NewParser().ParseHCL(src, filename)
	if file == nil || diags.HasErrors() {
		return l, damaged(diags, filename)
	}
	content, d := file.Body.Content(fileSchema)
	diags = append(diags, d...)
	top := reader{attrs: content.Attributes}
	l.Hosts = top.strings("hosts")
	diags = append(diags, top.diags...)
	seen := map[string]hcl.Range{}
	for _, b := range content.Blocks {
		m, d := parseModule(b)
		diags = append(diags, d...)
		if prev, ok := seen[m.Name]; ok {
			diags = append(diags, diag(b.LabelRanges[0], "Duplicate module in lock", "Module %q is already locked at %s (a module block and a retired block name one module too). Remove one of the blocks (keep the one version control has), then run \"pin resolve\".", m.Name, prev))
			continue
		}
		seen[m.Name] = b.DefRange
		if b.Type == "retired" {
			l.Retired = append(l.Retired, m)
			continue
		}
		l.Modules = append(l.Modules, m)
	}
	return l.normalised(), diags
}

// damaged adds to the errors of a lock that is not HCL (a bad merge, an
// edit) what to do: restore it, never delete it.
func damaged(diags hcl.Diagnostics, filename string) hcl.Diagnostics {
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			d.Detail = strings.TrimSpace(d.Detail + " " + fmt.Sprintf("pin writes the lock whole, so it was damaged after: restore it from version control (git checkout -- %s), or undo the edit or merge that broke it. Do not delete it: a lock deleted forgets every floor it held (what was locked and ran before no longer bounds the next lock).", filename))
		}
	}
	return diags
}

func diag(rng hcl.Range, summary, detail string, args ...any) *hcl.Diagnostic {
	r := rng
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(detail, args...), Subject: &r}
}

func parseModule(b *hcl.Block) (*Module, hcl.Diagnostics) {
	m := &Module{Name: b.Labels[0], DeclRange: b.DefRange}
	content, diags := b.Body.Content(moduleSchema)
	a := content.Attributes
	r := reader{attrs: a}
	m.Policy = Policy(r.str("policy"))
	m.Image = r.repository("image")
	m.Tag = r.str("tag")
	m.Tags = r.strings("tags")
	m.Digest = r.digest("digest")
	m.Config = r.digest("config")
	m.Version = r.str("version")
	m.Created = r.time("created")
	m.Platforms = r.platforms("platforms")
	m.Source = Source(r.str("source"))
	m.Rule = Rule(r.str("rule"))
	m.Reason = r.str("reason")
	m.AllowDowngrade = r.str("allow_downgrade")
	m.Restore = r.str("restore")
	m.Verified = Method(r.str("verified"))
	m.Signer = r.str("signer")
	m.Signature = r.digest("signature")
	m.AllowUnverified = r.str("allow_unverified")
	m.Hosts = r.strings("hosts")
	m.Hold = r.str("hold")
	for _, kv := range [][2]string{{"policy", string(m.Policy)}, {"image", m.Image}, {"digest", m.Digest}, {"source", string(m.Source)}} {
		k, v := kv[0], kv[1]
		if attr := a[k]; attr != nil && v == "" && !r.diags.HasErrors() {
			r.diags = append(r.diags, diag(attr.Expr.Range(), "Empty value in lock", "%s must not be empty. "+repair, k))
		}
	}
	if attr := a["policy"]; attr != nil && m.Policy != "" && !known(m.Policy, Policies) {
		r.diags = append(r.diags, diag(attr.Expr.Range(), "Invalid policy", "policy is %s; this lock says %q. "+repair, quotedList(Policies), m.Policy))
	}
	if attr := a["source"]; attr != nil && m.Source != "" && !known(m.Source, Sources) {
		r.diags = append(r.diags, diag(attr.Expr.Range(), "Invalid source", "source is %s; this lock says %q. "+repair, quotedList(Sources), m.Source))
	}
	for _, ob := range content.Blocks {
		if ob.Type == "promoted" {
			if m.Promoted != nil {
				diags = append(diags, diag(ob.DefRange, "Duplicate promoted block", "Module %q has more than one promoted block; an entry comes from one promotion. "+repair, m.Name))
				continue
			}
			p, d := parsePromoted(ob)
			m.Promoted = p
			diags = append(diags, d...)
			continue
		}
		oc, d := ob.Body.Content(observedSchema)
		diags = append(diags, d...)
		or := reader{attrs: oc.Attributes}
		m.Observed = append(m.Observed, Observation{
			Host:      ob.Labels[0],
			Container: or.str("container"),
			Tag:       or.str("tag"),
			Digest:    or.digest("digest"),
			ImageID:   or.digest("image_id"),
			Version:   or.str("version"),
			Created:   or.time("created"),
		})
		diags = append(diags, or.diags...)
	}
	return m, append(diags, r.diags...)
}

// parsePromoted reads a module's promoted block: where "pin promote" took
// the entry's image from.
func parsePromoted(b *hcl.Block) (*Promotion, hcl.Diagnostics) {
	content, diags := b.Body.Content(promotedSchema)
	r := reader{attrs: content.Attributes}
	p := &Promotion{From: r.str("from"), Hosts: r.strings("hosts"), Since: r.time("since"), Release: r.digest("release"), Health: r.strings("health")}
	for _, k := range []string{"from", "release"} {
		if a := content.Attributes[k]; a != nil && !r.diags.HasErrors() && ((k == "from" && p.From == "") || (k == "release" && p.Release == "")) {
			r.diags = append(r.diags, diag(a.Expr.Range(), "Empty value in lock", "%s must not be empty in a promoted block. "+repair, k))
		}
	}
	return p, append(diags, r.diags...)
}

// reader reads attributes as literal strings, collecting diagnostics.
type reader struct {
	attrs hcl.Attributes
	diags hcl.Diagnostics
}

func (r *reader) str(k string) string {
	a := r.attrs[k]
	if a == nil {
		return ""
	}
	v, d := a.Expr.Value(nil)
	if d.HasErrors() {
		r.diags = append(r.diags, d...)
		return ""
	}
	if v.Type() != cty.String || v.IsNull() || !v.IsKnown() {
		r.diags = append(r.diags, diag(a.Expr.Range(), "Invalid lock value", "%s must be a quoted string. "+repair, k))
		return ""
	}
	return v.AsString()
}

// strings reads a list of non-empty strings.
func (r *reader) strings(k string) []string {
	a := r.attrs[k]
	if a == nil {
		return nil
	}
	v, d := a.Expr.Value(nil)
	bad := func() []string {
		r.diags = append(r.diags, d...)
		r.diags = append(r.diags, diag(a.Expr.Range(), "Invalid lock value", "%s must be a list of quoted, non-empty strings, such as [\"1.27.3\"]. "+repair, k))
		return nil
	}
	if d.HasErrors() || v.IsNull() || !v.IsKnown() || !(v.Type().IsTupleType() || v.Type().IsListType()) {
		return bad()
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.Type() != cty.String || ev.IsNull() || !ev.IsKnown() || ev.AsString() == "" {
			return bad()
		}
		out = append(out, ev.AsString())
	}
	return out
}

func (r *reader) digest(k string) string {
	s := r.str(k)
	if s == "" {
		return ""
	}
	if !validDigest(s) {
		r.diags = append(r.diags, diag(r.attrs[k].Expr.Range(), "Invalid digest in lock", "%s must be sha256: followed by 64 lowercase hex digits; the lock says %q. "+repair, k, s))
		return ""
	}
	return s
}

func (r *reader) repository(k string) string {
	s := r.str(k)
	if s == "" {
		return ""
	}
	if !validRepository(s) {
		repo, err := name.NewRepository(s, name.StrictValidation)
		want := ""
		if err == nil {
			want = fmt.Sprintf(" (%q)", repo.Name())
		}
		r.diags = append(r.diags, diag(r.attrs[k].Expr.Range(), "Image not in canonical form", "image must be the full repository name%s; the lock says %q. "+repair, want, s))
		return ""
	}
	return s
}

func (r *reader) time(k string) time.Time {
	s := r.str(k)
	if s == "" {
		return time.Time{}
	}
	t, ok := validTime(s)
	if !ok {
		r.diags = append(r.diags, diag(r.attrs[k].Expr.Range(), "Invalid date in lock", "%s must be an RFC 3339 date in UTC, such as \"2026-09-17T00:00:00Z\"; the lock says %q.", k, s))
		return time.Time{}
	}
	return t
}

func (r *reader) platforms(k string) map[string]string {
	a := r.attrs[k]
	if a == nil {
		return nil
	}
	v, d := a.Expr.Value(nil)
	if d.HasErrors() || !(v.Type().IsObjectType() || v.Type().IsMapType()) || v.IsNull() {
		r.diags = append(r.diags, d...)
		r.diags = append(r.diags, diag(a.Expr.Range(), "Invalid platforms", "platforms must map \"os/arch\" to a digest. "+repair))
		return nil
	}
	out := map[string]string{}
	for it := v.ElementIterator(); it.Next(); {
		kv, dv := it.Element()
		if kv.Type() != cty.String || dv.Type() != cty.String || dv.IsNull() {
			r.diags = append(r.diags, diag(a.Expr.Range(), "Invalid platforms", "platforms must map \"os/arch\" to a digest."))
			return nil
		}
		h, err := v1.NewHash(dv.AsString())
		if err != nil || h.String() != dv.AsString() {
			r.diags = append(r.diags, diag(a.Expr.Range(), "Invalid digest in lock", "platform %s has digest %q; write sha256: followed by 64 lowercase hex digits.", kv.AsString(), dv.AsString()))
			return nil
		}
		out[kv.AsString()] = dv.AsString()
	}
	return out
}

// validDigest reports whether s is a digest in the form Format writes:
// "sha256:" and 64 lowercase hex digits.
func validDigest(s string) bool {
	h, err := v1.NewHash(s)
	return err == nil && h.Algorithm == "sha256" && h.String() == s
}

// validRepository reports whether s is a full repository name in canonical
// form.
func validRepository(s string) bool {
	repo, err := name.NewRepository(s, name.StrictValidation)
	return err == nil && repo.Name() == s
}
