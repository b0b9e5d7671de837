package lock

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"io"
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
	format(&b, l)
	return b.Bytes()
}

// Sum is the SHA-256 of Format(l), computed without holding Format's
// bytes: a run that changes nothing needs only to tell that it does not,
// and the formatted lock of 1,100 modules was 0.6 MB of the heap when it
// was largest.
func Sum(l *Lock) [sha256.Size]byte {
	h := sha256.New()
	w := bufio.NewWriterSize(h, 32<<10)
	format(w, l.normalised())
	w.Flush() // a hash.Hash never fails a write
	return [sha256.Size]byte(h.Sum(nil))
}

// writer is what format writes to: a bytes.Buffer, or a bufio.Writer.
type writer interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
	AvailableBuffer() []byte
}

// format writes l, normalised, to b.
func format(b writer, l *Lock) {
	b.WriteString(header)
	if hosts := tagList(l.Hosts); len(hosts) > 0 {
		b.WriteString("\nhosts = ")
		b.Write(appendQuotedList(b.AvailableBuffer(), hosts))
		b.WriteString("\n")
	}
	// Two runs serve every module: a module's attributes, and those of a
	// block within it (platforms, observed).
	var run, inner attrRun
	for _, m := range l.Modules {
		writeEntry(b, "module", m, &run, &inner)
	}
	for _, m := range l.Retired {
		writeEntry(b, "retired", m, &run, &inner)
	}
}

// writeEntry writes one entry as a block of type kind ("module", or
// "retired" for the entry of a module that left the catalogue).
func writeEntry(b writer, kind string, m *Module, run, inner *attrRun) {
	b.WriteString("\n" + kind + " ")
	writeQuoted(b, m.Name)
	b.WriteString(" {\n")
	run.add("policy", string(m.Policy))
	run.add("image", m.Image)
	run.add("tag", m.Tag)
	if tags := tagList(m.Tags); len(tags) > 0 {
		run.addList("tags", tags)
	}
	run.add("digest", m.Digest)
	run.add("config", m.Config)
	run.add("version", m.Version)
	run.add("created", FormatTime(m.Created))
	if len(m.Platforms) > 0 {
		run.write(b, "  ")
		b.WriteString("  platforms = {\n")
		for _, p := range slices.Sorted(maps.Keys(m.Platforms)) {
			inner.addQuotedKey(p, m.Platforms[p])
		}
		inner.write(b, "    ")
		b.WriteString("  }\n")
	}
	run.add("source", string(m.Source))
	run.add("rule", string(m.Rule))
	run.add("reason", m.Reason)
	run.add("allow_downgrade", m.AllowDowngrade)
	run.add("restore", m.Restore)
	run.add("verified", string(m.Verified))
	run.add("signer", m.Signer)
	run.add("signature", m.Signature)
	run.add("allow_unverified", m.AllowUnverified)
	run.add("hold", m.Hold)
	if hosts := tagList(m.Hosts); len(hosts) > 0 {
		run.addList("hosts", hosts)
	}
	run.write(b, "  ")
	if p := m.Promoted; p != nil {
		b.WriteString("\n  promoted {\n")
		inner.add("from", p.From)
		if hosts := tagList(p.Hosts); len(hosts) > 0 {
			inner.addList("hosts", hosts)
		}
		inner.add("since", FormatTime(p.Since))
		inner.add("release", p.Release)
		if health := tagList(p.Health); len(health) > 0 {
			inner.addList("health", health)
		}
		inner.write(b, "    ")
		b.WriteString("  }\n")
	}
	for _, o := range m.Observed {
		b.WriteString("\n  observed ")
		writeQuoted(b, o.Host)
		b.WriteString(" {\n")
		inner.add("container", o.Container)
		inner.add("tag", o.Tag)
		inner.add("digest", o.Digest)
		inner.add("image_id", o.ImageID)
		inner.add("version", o.Version)
		inner.add("created", FormatTime(o.Created))
		inner.write(b, "    ")
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
}

// attrRun is a run of one-line attributes, aligned on "=" when written.
// Empty values are left out. Keys and quoted values go one after another
// into one buffer, which write empties for the next run: formatting a
// lock allocates nothing per attribute (it allocated 6 bytes of garbage
// for every byte written).
type attrRun struct {
	buf   []byte
	attrs []attrEnds
}

// attrEnds are where an attribute's key and value end in attrRun.buf; each
// begins where the one before ends.
type attrEnds struct{ key, value int }

func (r *attrRun) add(k, v string) {
	if v != "" {
		r.buf = append(r.buf, k...)
		r.keyEnds()
		r.buf = appendQuoted(r.buf, v)
		r.valueEnds()
	}
}

// addQuotedKey adds an attribute whose key is quoted too (a platform).
func (r *attrRun) addQuotedKey(k, v string) {
	r.buf = appendQuoted(r.buf, k)
	r.keyEnds()
	r.buf = appendQuoted(r.buf, v)
	r.valueEnds()
}

// addList adds an attribute whose value is a one-line list of strings.
func (r *attrRun) addList(k string, ss []string) {
	r.buf = append(r.buf, k...)
	r.keyEnds()
	r.buf = appendQuotedList(r.buf, ss)
	r.valueEnds()
}

func (r *attrRun) keyEnds() { r.attrs = append(r.attrs, attrEnds{key: len(r.buf)}) }

func (r *attrRun) valueEnds() { r.attrs[len(r.attrs)-1].value = len(r.buf) }

// write writes the run at indent and empties it.
func (r *attrRun) write(b writer, indent string) {
	width, start := 0, 0
	for _, a := range r.attrs {
		width = max(width, utf8.RuneCount(r.buf[start:a.key]))
		start = a.value
	}
	start = 0
	for _, a := range r.attrs {
		k := r.buf[start:a.key]
		b.WriteString(indent)
		b.Write(k)
		for range width - utf8.RuneCount(k) {
			b.WriteByte(' ')
		}
		b.WriteString(" = ")
		b.Write(r.buf[a.key:a.value])
		b.WriteString("\n")
		start = a.value
	}
	r.buf, r.attrs = r.buf[:0], r.attrs[:0]
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

// appendQuotedList appends strings as a one-line HCL list: ["a", "b"].
func appendQuotedList(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendQuoted(dst, s)
	}
	return append(dst, ']')
}

// quote renders s as an HCL string literal, escaped as hclwrite escapes it.
// A string of printable ASCII with nothing to escape (no quote, backslash,
// "$" or "%") is quoted as it is, without hclwrite's tokens: most of a
// lock's values, and most of Format's time before (TestQuoteAgrees).
func quote(s string) []byte { return appendQuoted(nil, s) }

// writeQuoted writes quote(s) to b.
func writeQuoted(b writer, s string) { b.Write(appendQuoted(b.AvailableBuffer(), s)) }

// appendQuoted appends quote(s) to dst.
func appendQuoted(dst []byte, s string) []byte {
	if plain(s) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	return append(dst, hclwrite.TokensForValue(cty.StringVal(s)).Bytes()...)
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

// FormatTime renders a date as a lock line writes it: RFC 3339 in UTC, in
// whole seconds; "" for the zero time. It is the one rule for a date pin
// writes: Parse reads back only this form, Equal and SameSecond compare at
// its precision, and reports render dates with it.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// SameSecond reports whether a and b are one date as a lock line writes
// it (FormatTime): the same second, whatever their zone and fraction; the
// zero time only equals itself.
func SameSecond(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero() == b.IsZero()
	}
	return a.Unix() == b.Unix()
}
