package registry

import (
	"encoding/base64"
	"testing"
)

func TestChallengeParam(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ params, key, want string }{
		{`realm="https://a/token",service="r"`, "realm", "https://a/token"},
		{`service="r", realm="https://a/token"`, "realm", "https://a/token"},
		{`Realm=https://a/token,service=r`, "realm", "https://a/token"},
		{`scope="repository:a,b:pull",realm="https://a/t"`, "realm", "https://a/t"},
		{`service="r"`, "realm", ""},
		{`realm="unterminated`, "realm", "unterminated"},
		{``, "realm", ""},
	} {
		if got := challengeParam(tc.params, tc.key); got != tc.want {
			t.Errorf("challengeParam(%q, %q) = %q, want %q", tc.params, tc.key, got, tc.want)
		}
	}
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	enc := base64.StdEncoding.EncodeToString([]byte("pin:s3cret-pass"))
	got := credentials("Basic " + enc)
	for _, want := range []string{"Basic " + enc, enc, "pin:s3cret-pass", "s3cret-pass"} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("credentials(Basic …) = %q, lacks %q", got, want)
		}
	}
	if got := credentials("Bearer tok123"); len(got) != 2 || got[1] != "tok123" {
		t.Errorf("credentials(Bearer) = %q", got)
	}
	if got := credentials(""); got != nil {
		t.Errorf("credentials(\"\") = %q", got)
	}
}
