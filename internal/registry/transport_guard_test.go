package registry

import (
	"net/http"
	"net/url"
	"testing"
)

func TestGuard(t *testing.T) {
	t.Parallel()
	ok := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})
	for _, tc := range []struct {
		url       string
		host      string
		allowHTTP bool
		refused   bool
		method    string
	}{
		{"https://10.0.0.5/v2/", "10.0.0.5", false, false, ""},
		{"http://10.0.0.5/v2/", "10.0.0.5", false, true, ""}, // ggcr's private-address fallback
		{"http://192.168.1.2:5000/v2/", "192.168.1.2:5000", false, true, ""},
		{"http://registry.example.org/v2/", "registry.example.org", true, false, ""},
		{"http://auth.example.org/token", "registry.example.org", true, true, ""}, // insecure is for this registry only
		{"http://127.0.0.1:5000/v2/", "registry.example.org", false, false, ""},
		{"http://127.1.2.3:5000/v2/", "registry.example.org", false, false, ""},
		{"http://[::1]:5000/v2/", "registry.example.org", false, false, ""},
		{"http://localhost:5000/v2/", "registry.example.org", false, false, ""},
		// An OAuth2 token POST (a refresh token in its body) goes to the
		// registry or its token server only, even redirected.
		{"https://auth.docker.io/token", "index.docker.io", false, false, http.MethodPost},
		{"https://registry.example.org/oauth2/token", "registry.example.org", false, false, http.MethodPost},
		{"https://elsewhere.example.net/token", "index.docker.io", false, true, http.MethodPost},
		{"https://elsewhere.example.net/blob", "index.docker.io", false, false, http.MethodGet},
	} {
		g := &guard{next: ok, host: tc.host, allowHTTP: tc.allowHTTP}
		method := tc.method
		if method == "" {
			method = http.MethodGet
		}
		req, _ := http.NewRequest(method, tc.url, nil)
		_, err := g.RoundTrip(req)
		if (err != nil) != tc.refused {
			t.Errorf("%s (registry %s, insecure %v): err = %v, want refused %v", tc.url, tc.host, tc.allowHTTP, err, tc.refused)
		}
	}
}

func TestRealmAllowed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		realm, registry string
		ok              bool
		tokenHosts      []string
	}{
		{"https://auth.docker.io/token", "index.docker.io", true, nil},
		{"https://auth.docker.io/token", "registry-1.docker.io", true, nil},
		{"https://gitlab.com/jwt/auth", "registry.gitlab.com", true, nil},
		{"https://gitlab.example.com/jwt/auth", "registry.example.com", true, nil},
		{"https://ghcr.io/token", "ghcr.io", true, nil},
		{"https://ghcr.io:443/token", "ghcr.io", true, nil},
		{"https://quay.io/v2/auth", "quay.io", true, nil},
		{"https://europe-docker.pkg.dev/v2/token", "europe-docker.pkg.dev", true, nil},
		{"http://127.0.0.1:5000/token", "127.0.0.1:5000", true, nil},
		{"https://auth.example.co.uk/token", "registry.example.co.uk", true, nil},

		{"https://evil.example/token", "ghcr.io", false, nil},
		{"https://evil.io/token", "ghcr.io", false, nil},
		{"http://auth.docker.io/token", "index.docker.io", false, nil}, // plain http elsewhere
		{"https://docker.io.evil.example/token", "index.docker.io", false, nil},
		{"https://evildocker.io/token", "index.docker.io", false, nil},
		{"http://127.0.0.1:6000/token", "127.0.0.1:5000", false, nil},
		{"http://127.0.0.2:5000/token", "127.0.0.1:5000", false, nil},
		{"https://10.0.0.1/token", "10.0.0.2", false, nil},
		{"https://evil.co.uk/token", "example.co.uk", false, nil},
		{"https://evil.com.au/token", "shop.com.au", false, nil},
		{"https://authn.nvidia.com/token", "nvcr.io", false, nil}, // unless the catalogue says so:
		{"https://authn.nvidia.com/token", "nvcr.io", true, []string{"authn.nvidia.com"}},
		{"https://authn.nvidia.com:443/token", "nvcr.io", true, []string{"AUTHN.nvidia.com"}},
		{"https://authn.nvidia.com:8443/token", "nvcr.io", false, []string{"authn.nvidia.com"}},
		{"http://authn.nvidia.com/token", "nvcr.io", false, []string{"authn.nvidia.com"}}, // https only
		{"https://evil.nvidia.com/token", "nvcr.io", false, []string{"authn.nvidia.com"}},
		{"http://127.0.0.1:6000/token", "127.0.0.1:5000", true, []string{"127.0.0.1:6000"}}, // loopback may be http
	} {
		u, err := url.Parse(tc.realm)
		if err != nil {
			t.Fatal(err)
		}
		if got := realmAllowed(u, tc.registry, tc.tokenHosts); got != tc.ok {
			t.Errorf("realmAllowed(%s, %s, %v) = %v, want %v", tc.realm, tc.registry, tc.tokenHosts, got, tc.ok)
		}
	}
}
