package main

import (
	"strings"
	"testing"
)

// FuzzLineSanitizer: text written to a lineSanitizer in any pieces comes
// out as sanitize prints it whole.
func FuzzLineSanitizer(f *testing.F) {
	long := strings.Repeat("x", maxPrintedRun+10)
	for _, s := range []string{
		"plain\ntext\n",
		"no newline at the end",
		"esc \x1b[31mred\x1b[0m\n\nbidi \u202e here\n",
		long + " " + long + "\n" + long,
		strings.Repeat("word ", maxPrintedLine/4) + "\nnext\n",
		"é ü 漢字 \u2028 sep\n\u0085 c1\n",
		"",
		"\n\n\n",
	} {
		f.Add(s, uint64(0x9e3779b97f4a7c15))
	}
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		var out strings.Builder
		ls := &lineSanitizer{w: &out}
		for rest := text; rest != ""; {
			seed = seed*6364136223846793005 + 1442695040888963407
			n := min(len(rest), 1+int(seed>>58)) // 1 to 64 bytes, runes split too
			if _, err := ls.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := ls.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := out.String(), sanitize(text); got != want {
			t.Fatalf("in pieces:\n%q\nwhole:\n%q", got, want)
		}
	})
}
