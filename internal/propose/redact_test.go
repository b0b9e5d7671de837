package propose

import (
	"errors"
	"strings"
	"testing"
)

func TestRedactor(t *testing.T) {
	r := NewRedactor([]string{"https://x-token:p%40ss-word9@host/o/r.git", "https://glpat-abcdef123456@gitlab.example.org/o/r.git", "https://git@host/o/r", "origin"}, []string{"ghp_token0123", ""})
	for in, want := range map[string]string{
		"pushing to https://x-token:p%40ss-word9@host/o/r.git":                   "pushing to https://***@host/o/r.git",
		"'https://glpat-abcdef123456@gitlab.example.org/o/r.git/'":               "'https://***@gitlab.example.org/o/r.git/'",
		"the password p@ss-word9 and p%40ss-word9, the token glpat-abcdef123456": "the password *** and ***, the token ***",
		`{"remote": "https://x:a\u0026b@host/"}`:                                 `{"remote": "https://***@host/"}`,
		"Authorization: token ghp_token0123":                                     "Authorization: token ***",
		"git fetch origin main: git is fine":                                     "git fetch origin main: git is fine", // short user names are words
		"ssh://git@host:22/o/r.git":                                              "ssh://***@host:22/o/r.git",
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q)\n got %q\nwant %q", in, got, want)
		}
	}
	base := errors.New("fetching from https://u:p%40ss-word9@host")
	err := r.Error(base)
	if !errors.Is(err, base) || strings.Contains(err.Error(), "word9") {
		t.Errorf("Error: %v", err)
	}
	var b strings.Builder
	r.Writer(&b).Write([]byte("token ghp_token0123\n"))
	if b.String() != "token ***\n" {
		t.Errorf("Writer wrote %q", b.String())
	}
}
