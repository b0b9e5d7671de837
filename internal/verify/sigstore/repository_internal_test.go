package sigstore

import "testing"

// TestCanonical: repositories compare as registries name them.
func TestCanonical(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"nginx", "docker.io/library/nginx", true},
		{"nginx", "index.docker.io/library/nginx:1.27", true},
		{"127.0.0.1:5000/app", "127.0.0.1:5000/app@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true},
		{"127.0.0.1:5000/app", "127.0.0.1:5000/admin", false},
		{"ghcr.io/example/web", "docker.io/example/web", false},
	} {
		if got := canonical(tt.a) == canonical(tt.b); got != tt.same {
			t.Errorf("%s and %s: same %v, want %v (%s, %s)", tt.a, tt.b, got, tt.same, canonical(tt.a), canonical(tt.b))
		}
	}
}
