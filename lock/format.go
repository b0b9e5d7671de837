package lock

import (
	"bytes"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

const header = `# This file is maintained by pin. It records, for every module of the
# catalogue, the image to run and why. Edit the catalogue, not this file,
# and run "pin resolve" to update it.
`

// Format renders a lock as HCL. The same lock always gives the same bytes:
// Format writes modules and observations in a fixed order, on a sorted copy
// where l is out of order; it never changes l or anything l points to. A
// nil lock formats as an empty one.
//
// It writes the layout hclwrite's formatter would (attributes aligned on
// "=" within runs of one-line attributes, a blank line before each nested
// block) directly: formatting through hclwrite cost a scanner per token,
// which dominated pin's memory on large fleets. The golden files and the
// format → parse → format fuzz target hold the bytes to that layout;
// values are quoted by hclwrite itself.
func Format(l *Lock) []byte {
	l = l.normalised()
	var b bytes.Buffer
	b.Grow(len(header) + 600*len(l.Modules)) // a module is about 600 bytes
	b.WriteString(header)
	if hosts := tagList(l.Hosts); len(hosts) > 0 {
		b.WriteString("\nhosts = ")
		b.Write(quoteList(hosts))
		b.WriteString("\n")
	}
	for _, m := range l.Modules {
		b.WriteString("\nmodule ")
		writeQuoted(&b, m.Name)
		b.WriteString(" {\n")
		var run attrRun
		run.add("policy", m.Policy)
		run.add("image", m.Image)
		run.add("tag", m.Tag)
		if tags := tagList(m.Tags); len(tags) > 0 {
			run.addRaw("tags", quoteList(tags))
		}
		run.add("digest", m.Digest)
		run.add("config", m.Config)
		run.add("version", m.Version)
		run.add("created", formatTime(m.Created))
		if len(m.Platforms) > 0 {
			run.write(&b, "  ")
			b.WriteString("  platforms = {\n")
			var entries attrRun
			for _, p := range slices.Sorted(maps.Keys(m.Platforms)) {
				entries.addKey(quote(p), m.Platforms[p])
			}
			entries.write(&b, "    ")
			b.WriteString("  }\n")
		}
		run.add("source", m.Source)
		run.add("rule", m.Rule)
		run.add("reason", m.Reason)
		run.add("allow_downgrade", m.AllowDowngrade)
		run.add("restore", m.Restore)
		run.add("verified", m.Verified)
		run.add("signer", m.Signer)
		run.add("signature", m.Signature)
		if hosts := tagList(m.Hosts); len(hosts) > 0 {
			run.addRaw("hosts", quoteList(hosts))
		}
		run.write(&b, "  ")
		for _, o := range m.Observed {
			b.WriteString("\n  observed ")
			writeQuoted(&b, o.Host)
			b.WriteString(" {\n")
			var or attrRun
			or.add("container", o.Container)
			or.add("tag", o.Tag)
			or.add("digest", o.Digest)
			or.add("image_id", o.ImageID)
			or.add("version", o.Version)
			or.add("created", formatTime(o.Created))
			or.write(&b, "    ")
			b.WriteString("  }\n")
		}
		b.WriteString("}\n")
	}
	return b.Bytes()
}

// attrRun is a run of one-line attributes, aligned on "=" when written.
// Empty values are left out.
type attrRun struct {
	keys   [][]byte
	values [][]byte // quoted
	width  int
}

func (r *attrRun) add(k, v string) {
	if v != "" {
		r.addKey([]byte(k), v)
	}
}

func (r *attrRun) addKey(k []byte, v string) { r.addRaw(string(k), quote(v)) }

// addRaw adds an attribute whose value is already HCL (a quoted list).
func (r *attrRun) addRaw(k string, v []byte) {
	r.keys = append(r.keys, []byte(k))
	r.values = append(r.values, v)
	r.width = max(r.width, utf8.RuneCountInString(k))
}

// tagList is tags as Format writes them: sorted, each once, empty ones
// left out. It never changes tags.
func tagList(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	out := slices.Clone(tags)
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

// quoteList renders strings as a one-line HCL list: ["a", "b"].
func quoteList(ss []string) []byte {
	b := []byte{'['}
	for i, s := range ss {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, quote(s)...)
	}
	return append(b, ']')
}

// write writes the run at indent and empties it.
func (r *attrRun) write(b *bytes.Buffer, indent string) {
	for i, k := range r.keys {
		b.WriteString(indent)
		b.Write(k)
		for range r.width - utf8.RuneCount(k) {
			b.WriteByte(' ')
		}
		b.WriteString(" = ")
		b.Write(r.values[i])
		b.WriteString("\n")
	}
	*r = attrRun{}
}

// quote renders s as an HCL string literal, escaped as hclwrite escapes it.
// A string of printable ASCII with nothing to escape (no quote, backslash,
// "$" or "%") is quoted as it is, without hclwrite's tokens: most of a
// lock's values, and most of Format's time before (TestQuoteAgrees).
func quote(s string) []byte {
	var b bytes.Buffer
	writeQuoted(&b, s)
	return b.Bytes()
}

// writeQuoted writes quote(s) to b.
func writeQuoted(b *bytes.Buffer, s string) {
	if plain(s) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	b.Write(hclwrite.TokensForValue(cty.StringVal(s)).Bytes())
}

// plain reports whether s is printable ASCII with nothing hclwrite escapes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c >= 0x7f, c == '"', c == '\\', c == '$', c == '%':
			return false
		}
	}
	return true
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
