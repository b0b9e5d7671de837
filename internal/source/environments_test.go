package source

import "testing"

func TestLockPath(t *testing.T) {
	for _, tt := range []struct{ path, env, want string }{
		{"pin.lock.hcl", "", "pin.lock.hcl"},
		{"pin.lock.hcl", "staging", "pin.lock.staging.hcl"},
		{"deploy/pin.lock.hcl", "production", "deploy/pin.lock.production.hcl"},
		{"locks/app.hcl", "dev", "locks/app.dev.hcl"},
		{"lockfile", "dev", "lockfile.dev"},
	} {
		if got := LockPath(tt.path, tt.env); got != tt.want {
			t.Errorf("LockPath(%q, %q) = %q, want %q", tt.path, tt.env, got, tt.want)
		}
	}
}
