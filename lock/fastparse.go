package lock

import (
	"bytes"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// parseFast reads a lock written in exactly Format's layout, without
// hclparse: at 1,000 modules hclparse allocates about 66 MB to read a
// 600 KB lock, which made parsing the previous lock the peak of pin's
// memory.
//
// It reads line by line and is lenient about layout on purpose, because
// its result is accepted only when Format gives back src byte for byte, and
// only when every value passes the checks Parse makes (required and
// non-empty attributes, canonical digests, repositories and dates, known
// sources, no duplicate module). Whatever it does not understand (a
// comment, an escape other than \n \r \t \" \\, a "${" or "%{", a label
// that is not ASCII, an attribute Format does not write) makes it give up,
// and Parse reads the file with hclparse, which says what is wrong with
// it. On everything it accepts its result equals hclparse's, DeclRange
// included (TestFastPathAgrees, FuzzParse, FuzzFastPathValues).
func parseFast(src []byte, filename string) (*Lock, bool) {
	if !bytes.HasPrefix(src, []byte(header)) {
		return nil, false
	}
	p := &fastParser{src: src, off: len(header), line: strings.Count(header, "\n") + 1, filename: filename}
	l := &Lock{}
	if bytes.HasPrefix(src[p.off:], []byte("\nhosts = [")) {
		p.next()
		s, _ := p.next()
		var ok bool
		if l.Hosts, ok = listLine("  "+s, "hosts"); !ok {
			return nil, false
		}
	}
	for p.off < len(src) {
		if s, ok := p.next(); !ok || s != "" {
			return nil, false
		}
		// Modules first, then retired entries, each kind in name order.
		kind := "module"
		if len(l.Retired) > 0 || bytes.HasPrefix(src[p.off:], []byte("retired ")) {
			kind = "retired"
		}
		m, ok := p.module(kind)
		if !ok {
			return nil, false
		}
		list := &l.Modules
		if kind == "retired" {
			if l.Module(m.Name) != nil {
				return nil, false // a module and a retired entry of one name: Parse reports it
			}
			list = &l.Retired
		}
		if n := len(*list); n > 0 && (*list)[n-1].Name >= m.Name {
			return nil, false // out of order, or a duplicate: Parse reports it
		}
		*list = append(*list, m)
	}
	if !bytes.Equal(Format(l), src) {
		return nil, false
	}
	return l, true
}

type fastParser struct {
	src      []byte
	off      int // where the next line starts
	line     int // its number, from 1
	filename string
	// start and number of the line next returned last
	lineStart, lineNo int
}

// next returns the next line, without its newline; false at the end or
// for a last line without one (Format ends every line).
func (p *fastParser) next() (string, bool) {
	i := bytes.IndexByte(p.src[p.off:], '\n')
	if i < 0 {
		return "", false
	}
	s := string(p.src[p.off : p.off+i])
	p.lineStart, p.lineNo = p.off, p.line
	p.off += i + 1
	p.line++
	return s, true
}

// module reads one entry, a block of type kind ("module" or "retired").
func (p *fastParser) module(kind string) (*Module, bool) {
	s, ok := p.next()
	if !ok {
		return nil, false
	}
	lit, ok := strings.CutPrefix(s, kind+" ")
	if !ok {
		return nil, false
	}
	lit, ok = strings.CutSuffix(lit, " {")
	if !ok || !ascii(lit) {
		return nil, false
	}
	name, ok := unquote(lit)
	if !ok || name == "" {
		return nil, false
	}
	// hclsyntax's DefRange: from the block type to the end of its label;
	// columns count characters, which are bytes for an ASCII label.
	end := len(kind) + 1 + len(lit)
	m := &Module{Name: name, DeclRange: hcl.Range{
		Filename: p.filename,
		Start:    hcl.Pos{Line: p.lineNo, Column: 1, Byte: p.lineStart},
		End:      hcl.Pos{Line: p.lineNo, Column: 1 + end, Byte: p.lineStart + end},
	}}
	seen := map[string]bool{}
	for {
		s, ok := p.next()
		if !ok {
			return nil, false
		}
		switch {
		case s == "}":
			return m, m.Policy != "" && m.Image != "" && m.Digest != "" && m.Source != ""
		case s == "" && strings.HasPrefix(string(p.src[p.off:min(p.off+13, len(p.src))]), "  promoted {\n"):
			if m.Promoted != nil || len(m.Observed) > 0 {
				return nil, false
			}
			if m.Promoted, ok = p.promoted(); !ok {
				return nil, false
			}
		case s == "":
			o, ok := p.observed()
			if !ok {
				return nil, false
			}
			m.Observed = append(m.Observed, o)
		case s == "  platforms = {":
			if m.Platforms != nil || len(m.Observed) > 0 {
				return nil, false
			}
			if m.Platforms, ok = p.platforms(); !ok {
				return nil, false
			}
		case strings.HasPrefix(s, "  tags ") && !seen["tags"] && len(m.Observed) == 0:
			if m.Tags, ok = listLine(s, "tags"); !ok {
				return nil, false
			}
			seen["tags"] = true
		case strings.HasPrefix(s, "  hosts ") && !seen["hosts"] && len(m.Observed) == 0:
			if m.Hosts, ok = listLine(s, "hosts"); !ok {
				return nil, false
			}
			seen["hosts"] = true
		default:
			k, v, ok := attr(s, "  ")
			if !ok || seen[k] || len(m.Observed) > 0 || !m.set(k, v) {
				return nil, false
			}
			seen[k] = true
		}
	}
}

// listLine reads a line `  key = ["a", "b"]` (aligned like the others).
// Anything else is refused (the fast path then falls back to hclparse);
// what it accepts is held to Format's bytes like every line.
func listLine(s, key string) ([]string, bool) {
	lit, ok := strings.CutPrefix(strings.TrimLeft(strings.TrimPrefix(s, "  "+key), " "), "= [")
	if !ok || !strings.HasSuffix(lit, "]") {
		return nil, false
	}
	lit = strings.TrimSuffix(lit, "]")
	var out []string
	for lit != "" {
		end := closingQuote(lit)
		if end < 0 {
			return nil, false
		}
		v, ok := unquote(lit[:end+1])
		if !ok || v == "" {
			return nil, false
		}
		out = append(out, v)
		lit = lit[end+1:]
		if lit != "" {
			if lit, ok = strings.CutPrefix(lit, ", "); !ok {
				return nil, false
			}
		}
	}
	return out, len(out) > 0
}

// set checks and stores one attribute of a module, as Parse's reader does.
func (m *Module) set(k, v string) bool {
	switch k {
	case "policy":
		m.Policy = Policy(v)
		return known(m.Policy, Policies)
	case "image":
		m.Image = v
		return validRepository(v)
	case "tag":
		m.Tag = v
	case "digest":
		m.Digest = v
		return validDigest(v)
	case "config":
		m.Config = v
		return validDigest(v)
	case "version":
		m.Version = v
	case "created":
		var ok bool
		m.Created, ok = validTime(v)
		return ok
	case "source":
		m.Source = Source(v)
		return known(m.Source, Sources)
	case "rule":
		m.Rule = Rule(v)
	case "reason":
		m.Reason = v
	case "allow_downgrade":
		m.AllowDowngrade = v
	case "restore":
		m.Restore = v
	case "hold":
		m.Hold = v
	default:
		return false
	}
	return true
}

func (p *fastParser) platforms() (map[string]string, bool) {
	out := map[string]string{}
	for {
		s, ok := p.next()
		if !ok {
			return nil, false
		}
		if s == "  }" {
			return out, len(out) > 0
		}
		body, ok := strings.CutPrefix(s, "    ")
		if !ok || !strings.HasPrefix(body, `"`) {
			return nil, false
		}
		// The key is a quoted string: find its closing quote.
		i := closingQuote(body)
		if i < 0 {
			return nil, false
		}
		k, ok := unquote(body[:i+1])
		if !ok {
			return nil, false
		}
		rest := strings.TrimLeft(body[i+1:], " ")
		lit, ok := strings.CutPrefix(rest, "= ")
		if !ok {
			return nil, false
		}
		v, ok := unquote(lit)
		if _, dup := out[k]; !ok || dup || !validDigest(v) {
			return nil, false
		}
		out[k] = v
	}
}

// promoted reads a module's promoted block, its "  promoted {" line first.
func (p *fastParser) promoted() (*Promotion, bool) {
	if s, ok := p.next(); !ok || s != "  promoted {" {
		return nil, false
	}
	pr := &Promotion{}
	seen := map[string]bool{}
	for {
		s, ok := p.next()
		if !ok {
			return nil, false
		}
		if s == "  }" {
			return pr, pr.From != "" && pr.Release != ""
		}
		if strings.HasPrefix(s, "    hosts ") && !seen["hosts"] {
			if pr.Hosts, ok = listLine(s[2:], "hosts"); !ok {
				return nil, false
			}
			seen["hosts"] = true
			continue
		}
		if strings.HasPrefix(s, "    health ") && !seen["health"] {
			if pr.Health, ok = listLine(s[2:], "health"); !ok {
				return nil, false
			}
			seen["health"] = true
			continue
		}
		k, v, ok := attr(s, "    ")
		if !ok || seen[k] {
			return nil, false
		}
		seen[k] = true
		switch k {
		case "from":
			pr.From = v
		case "since":
			pr.Since, ok = validTime(v)
		case "release":
			pr.Release, ok = v, validDigest(v)
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
	}
}

func (p *fastParser) observed() (Observation, bool) {
	var o Observation
	s, ok := p.next()
	if !ok {
		return o, false
	}
	lit, ok := strings.CutPrefix(s, "  observed ")
	if !ok {
		return o, false
	}
	lit, ok = strings.CutSuffix(lit, " {")
	if !ok {
		return o, false
	}
	if o.Host, ok = unquote(lit); !ok {
		return o, false
	}
	seen := map[string]bool{}
	for {
		s, ok := p.next()
		if !ok {
			return o, false
		}
		if s == "  }" {
			return o, true
		}
		k, v, ok := attr(s, "    ")
		if !ok || seen[k] {
			return o, false
		}
		seen[k] = true
		switch k {
		case "container":
			o.Container = v
		case "tag":
			o.Tag = v
		case "digest":
			o.Digest, ok = v, validDigest(v)
		case "image_id":
			o.ImageID, ok = v, validDigest(v)
		case "version":
			o.Version = v
		case "created":
			o.Created, ok = validTime(v)
		default:
			ok = false
		}
		if !ok {
			return o, false
		}
	}
}

// attr reads `<indent>key<spaces> = "value"`.
func attr(s, indent string) (k, v string, ok bool) {
	body, ok := strings.CutPrefix(s, indent)
	if !ok {
		return "", "", false
	}
	i := strings.IndexByte(body, ' ')
	if i <= 0 {
		return "", "", false
	}
	k = body[:i]
	for j := 0; j < len(k); j++ {
		if c := k[j]; (c < 'a' || c > 'z') && c != '_' {
			return "", "", false
		}
	}
	lit, ok := strings.CutPrefix(strings.TrimLeft(body[i:], " "), "= ")
	if !ok {
		return "", "", false
	}
	v, ok = unquote(lit)
	return k, v, ok && v != ""
}

// closingQuote returns the index of the quote that closes the string
// literal s starts with, or -1.
func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// unquote reads a whole quoted string literal holding no template: the
// escapes \n \r \t \" and \\, and "$" and "%" when no "{" follows them.
// Anything else (other escapes, "${", "%{", "$${", control characters,
// invalid UTF-8) is not for the fast path.
func unquote(lit string) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	s := lit[1 : len(lit)-1]
	if !strings.ContainsAny(s, "\\\"{") && ascii(s) {
		return s, true
	}
	if !utf8.ValidString(s) {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c < 0x20 || c == 0x7f:
			return "", false
		case c == '\\':
			if i+1 == len(s) {
				return "", false
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case '"', '\\':
				b.WriteByte(s[i])
			default:
				return "", false
			}
		case (c == '$' || c == '%') && i+1 < len(s) && s[i+1] == '{':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// ascii reports whether s is printable ASCII.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// validTime is reader.time's check.
func validTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil && FormatTime(t) == s
}
