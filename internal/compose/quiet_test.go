package compose

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// secret is planted in every file a Compose file names, and in the
// environment: no error may show it.
const secret = "ghp_S3CRETt0ken"

// TestErrorsNeverQuoteOtherFiles: a Compose file that names another
// file (env_file, label_file, .env, include, extends) or interpolates a
// value into something invalid makes compose-go quote what it read. The
// error pin returns names the file and line (where compose-go says it)
// and what is wrong, and never holds the planted secret.
func TestErrorsNeverQuoteOtherFiles(t *testing.T) {
	for _, tt := range []struct {
		name    string
		compose string
		files   map[string]string // beside compose.yaml
		env     []string
		where   string // "FILE:LINE" or "FILE" the error starts with
		says    string
	}{
		{"env_file, an unclosed quote", "services:\n  web:\n    image: nginx:1.25\n    env_file: app.env\n",
			map[string]string{"app.env": "A=1\nTOKEN=\"" + secret + "\nB=2\n"}, nil, "app.env:", "a quoted value is still open where the file ends"},
		{"env_file, a line that is not NAME=value", "services:\n  web:\n    image: nginx:1.25\n    env_file: app.env\n",
			map[string]string{"app.env": "key%" + secret + "\n"}, nil, "app.env:1", "a variable name holds a character"},
		{"env_file, a bad substitution", "services:\n  web:\n    image: nginx:1.25\n    env_file: app.env\n",
			map[string]string{"app.env": "A=${" + secret + " x}\n"}, nil, "app.env", "not a valid substitution"},
		{".env", "services:\n  web:\n    image: nginx:1.25\n",
			map[string]string{".env": "A=\"" + secret + "\n"}, nil, ".env:", "a quoted value is still open where the file ends"},
		{"label_file", "services:\n  web:\n    image: nginx:1.25\n    label_file: labels\n",
			map[string]string{"labels": "A=\"" + secret + "\n"}, nil, "labels:", "a quoted value is still open where the file ends"},
		{"include, a value of the wrong type", "include:\n  - other.yaml\nservices:\n  web:\n    image: nginx:1.25\n",
			map[string]string{"other.yaml": "services:\n  x:\n    image: a\n    cpus: " + secret + "\n"}, nil, "compose.yaml", "services.x.cpus"},
		{"include, not YAML", "include:\n  - other.yaml\nservices:\n  web:\n    image: nginx:1.25\n",
			map[string]string{"other.yaml": "services:\n  x:\n    image: a\n    foo: [" + secret + "\n"}, nil, "other.yaml:4", "not valid YAML"},
		{"extends", "services:\n  web:\n    image: nginx:1.25\n    extends:\n      file: base.yaml\n      service: x\n",
			map[string]string{"base.yaml": "services:\n  x:\n    image: a\n    cpus: " + secret + "\n"}, nil, "compose.yaml", "cpus"},
		{".env interpolated into a number", "services:\n  web:\n    image: nginx:1.25\n    cpus: ${CPUS}\n",
			map[string]string{".env": "CPUS=" + secret + "\n"}, nil, "compose.yaml:4", "services.web.cpus"},
		{"the environment interpolated into an image", "services:\n  web:\n    image: \"nginx:${TAG}!\"\n",
			nil, []string{"TAG=" + secret}, "compose.yaml:3", `image "nginx:${TAG}!" is not a valid reference once read`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			main := write(t, dir, "compose.yaml", tt.compose)
			for n, text := range tt.files {
				write(t, dir, n, text)
			}
			env := tt.env
			if env == nil {
				env = []string{}
			}
			_, err := Load(context.Background(), Options{Files: []string{main}, Env: env})
			if err == nil {
				t.Fatal("loaded")
			}
			msg := err.Error()
			if strings.Contains(msg, secret) || strings.Contains(msg, secret[4:]) {
				t.Fatalf("the error quotes the secret:\n%s", msg)
			}
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrBadInput) {
				t.Errorf("%T %v: want an *Error wrapping ErrBadInput", err, err)
			}
			if !strings.HasPrefix(msg, filepath.Join(dir, tt.where)) || !strings.Contains(msg, tt.says) {
				t.Errorf("error %q, want it to start with %s and say %q", msg, filepath.Join(dir, tt.where), tt.says)
			}
			t.Log(msg)
		})
	}
}

func TestQuietText(t *testing.T) {
	srcs := map[string][]byte{"compose.yaml": []byte("services:\n  web:\n    image: \"${FOO\"\n")}
	for in, want := range map[string]string{
		`parsing "hunter2": invalid syntax`:                 `parsing "…": invalid syntax`,
		`Invalid template: "${FOO"`:                         `Invalid template: "${FOO"`, // the Compose file's own text
		"cannot unmarshal !!str `hunter2` into int":         "cannot unmarshal !!str `…` into int",
		`additional properties 'hunter2' not allowed`:       `additional properties '…' not allowed`,
		`did not find expected ',' or ']'`:                  `did not find expected ',' or ']'`,
		"unterminated quoted value \"hunter2\nnext line":    "unterminated quoted value \"…\nnext line",
		`the attribute ` + "`version`" + ` is obsolete`:     `the attribute ` + "`…`" + ` is obsolete`,
		`a "quote with \"escapes\" inside" and "services:"`: `a "…" and "services:"`,
		`it's Compose's`: `it's Compose's`,
	} {
		if got := quietText(in, srcs); got != want {
			t.Errorf("quietText(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}
