package export

import (
	"bytes"
	"fmt"
	"strings"
)

// EnvName is the variable an env file holds module m's image in: the
// module's name in capitals, '-' and '.' made '_', then "_IMAGE" ("forge"
// → FORGE_IMAGE).
func EnvName(module string) string {
	s := strings.ToUpper(module)
	s = strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
	return s + "_IMAGE"
}

// Env writes one NAME_IMAGE=repository:tag@digest line for each locked
// module of the catalogue into an env file (old, nil when absent): every
// line that assigns one of those variables is replaced where it is (a
// name assigned twice is rewritten twice: the last is what a shell,
// Compose's .env and --env-file use), missing ones appended in module
// order, every other line kept. A module not in the lock is unwritten.
func Env(path string, cov *Coverage, old []byte) Result {
	var r Result
	want := map[string]string{}
	entry := map[string]int{} // name → its index in r.Entries
	var order []string
	for _, m := range cov.cat.Modules {
		e, why := cov.Locked(m)
		if e == nil {
			r.Skipped = append(r.Skipped, Skip{What: "module " + m.Name, Why: why, Unwritten: true})
			continue
		}
		n := EnvName(m.Name)
		want[n] = Reference(e, "")
		order = append(order, n)
		entry[n] = len(r.Entries)
		r.Entries = append(r.Entries, Entry{Where: path + ", " + n, Module: m.Name, New: want[n]})
	}
	var lines [][]byte
	if len(old) > 0 {
		lines = bytes.Split(bytes.TrimSuffix(old, []byte("\n")), []byte("\n"))
	}
	done := map[string]bool{}
	for i, l := range lines {
		line, cr := string(l), ""
		if rest, found := strings.CutSuffix(line, "\r"); found {
			line, cr = rest, "\r" // a file saved with CRLF keeps its line ends
		}
		bom := ""
		if rest, found := strings.CutPrefix(line, byteOrderMark); found && i == 0 {
			line, bom = rest, byteOrderMark
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		// "export NAME=…" keeps its export.
		prefix := ""
		if f := strings.TrimSpace(k); len(f) > len("export") && strings.HasPrefix(f, "export") && (f[6] == ' ' || f[6] == '\t') {
			prefix, k = "export ", f[7:]
		}
		k = strings.TrimSpace(k)
		ref, mine := want[k]
		if !mine {
			continue
		}
		done[k] = true
		// The last assignment is the one that counts: Old is its value,
		// and what the deploy runs unless it is an interpolation.
		old, comment := envValue(v)
		r.Entries[entry[k]].Old = old
		r.Entries[entry[k]].Named = nil
		if old != "" && !strings.Contains(old, "$") {
			r.Entries[entry[k]].Named = []Named{{old, fmt.Sprintf("%s:%d", path, i+1)}}
		}
		lines[i] = fmt.Appendf(nil, "%s%s%s=%s%s%s", bom, prefix, k, ref, comment, cr)
	}
	for _, n := range order {
		if !done[n] {
			lines = append(lines, fmt.Appendf(nil, "%s=%s", n, want[n]))
		}
	}
	out := append(bytes.Join(lines, []byte("\n")), '\n')
	r.Files = append(r.Files, File{Path: path, Bytes: out, Old: old})
	return r
}

const byteOrderMark = "\ufeff"

// envValue is the value of an env file's assignment as Compose's .env and
// a shell read it, and the comment after it (" # …", kept when the line is
// rewritten): a quoted value ends at its closing quote; an unquoted one
// at the first '#' after a blank (one inside a word is part of it).
func envValue(v string) (value, comment string) {
	t := strings.TrimLeft(v, " \t")
	rest := ""
	if t != "" && (t[0] == '"' || t[0] == '\'') {
		end := strings.IndexByte(t[1:], t[0])
		if end < 0 {
			return strings.TrimSpace(t[1:]), ""
		}
		value, rest = t[1:1+end], t[2+end:]
	} else {
		value, rest = t, ""
		for i := 1; i < len(t); i++ {
			if t[i] == '#' && (t[i-1] == ' ' || t[i-1] == '\t') {
				value, rest = t[:i], t[i:]
				break
			}
		}
		value = strings.TrimSpace(value)
	}
	if c := strings.IndexByte(rest, '#'); c >= 0 {
		comment = " " + strings.TrimRight(rest[c:], " \t")
	}
	return value, comment
}
