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
		k, v, ok := strings.Cut(string(l), "=")
		if !ok {
			continue
		}
		// "export NAME=…" keeps its export.
		prefix := ""
		if rest, found := strings.CutPrefix(strings.TrimSpace(k), "export "); found {
			prefix, k = "export ", rest
		}
		k = strings.TrimSpace(k)
		ref, mine := want[k]
		if !mine {
			continue
		}
		done[k] = true
		// The last assignment is the one that counts: Old is its value,
		// and what the deploy runs unless it is an interpolation.
		old := strings.Trim(strings.TrimSpace(v), `"'`)
		r.Entries[entry[k]].Old = old
		r.Entries[entry[k]].Named = nil
		if old != "" && !strings.Contains(old, "$") {
			r.Entries[entry[k]].Named = []Named{{old, fmt.Sprintf("%s:%d", path, i+1)}}
		}
		cr := ""
		if bytes.HasSuffix(l, []byte("\r")) {
			cr = "\r" // a file saved with CRLF keeps its line ends
		}
		lines[i] = fmt.Appendf(nil, "%s%s=%s%s", prefix, k, ref, cr)
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
