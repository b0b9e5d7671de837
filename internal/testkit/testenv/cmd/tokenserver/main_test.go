package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

func TestParseScopes(t *testing.T) {
	repo := func(name string, actions ...string) access {
		return access{Type: "repository", Name: name, Actions: actions}
	}
	tests := []struct {
		name   string
		values []string
		want   []access
	}{
		{"none", nil, []access{}},
		{"pull", []string{"repository:a/b:pull"}, []access{repo("a/b", "pull")}},
		{"push,pull in order of grant", []string{"repository:a:push,pull"}, []access{repo("a", "pull", "push")}},
		{"star", []string{"repository:a:*"}, []access{repo("a", "pull", "push")}},
		{"delete is not granted", []string{"repository:a:pull,delete"}, []access{repo("a", "pull")}},
		{"nothing grantable", []string{"repository:a:delete"}, []access{}},
		{"repeated parameter", []string{"repository:a:pull", "repository:b:push"},
			[]access{repo("a", "pull"), repo("b", "push")}},
		{"spaces in one parameter", []string{"repository:a:pull  repository:b:pull,push"},
			[]access{repo("a", "pull"), repo("b", "pull", "push")}},
		{"host:port in the name", []string{"repository:127.0.0.1:5000/a:pull"},
			[]access{repo("127.0.0.1:5000/a", "pull")}},
		{"other types dropped", []string{"registry:catalog:*", "repository(plugin):p:pull", "repository:a:pull"},
			[]access{repo("a", "pull")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseScopes(tt.values)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseScopes(%q) = %+v, want %+v", tt.values, got, tt.want)
			}
		})
	}
	for _, bad := range []string{"repository", "repository:a", ":a:pull", "repository::pull"} {
		if got, err := parseScopes([]string{bad}); err == nil {
			t.Errorf("parseScopes(%q) = %+v, want an error", bad, got)
		}
	}
}

// parsedToken is a JWT split and decoded, its signature checked by nobody.
type parsedToken struct {
	header jwtHeader
	claims map[string]any
	signed string // header.claims, as signed
	sig    []byte
}

func parseToken(t *testing.T, tok string) parsedToken {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts, want 3: %q", len(parts), tok)
	}
	var p parsedToken
	for i, dst := range []any{&p.header, &p.claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("token part %d is not base64url without padding: %v", i, err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatalf("token part %d: %v", i, err)
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatalf("signature: %v", err)
	}
	p.signed, p.sig = parts[0]+"."+parts[1], sig
	return p
}

// TestTokenVerifies checks a token the way distribution 2.8 does: the x5c
// leaf chains to the root bundle, its key verifies the r||s signature, and
// the claims have the types and values the registry wants.
func TestTokenVerifies(t *testing.T) {
	iss, err := newIssuer("test-issuer")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	granted := []access{{Type: "repository", Name: "a/b", Actions: []string{"pull", "push"}}}
	tok, err := iss.sign(iss.claims("svc", granted, now))
	if err != nil {
		t.Fatal(err)
	}
	p := parseToken(t, tok)

	if p.header.Type != "JWT" || p.header.Alg != "ES256" || len(p.header.X5c) != 1 {
		t.Fatalf("header %+v, want typ JWT, alg ES256 and one x5c certificate", p.header)
	}
	der, err := base64.StdEncoding.DecodeString(p.header.X5c[0])
	if err != nil {
		t.Fatalf("x5c is not standard base64: %v", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(iss.certPEM()) {
		t.Fatal("no certificate in certPEM")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		t.Fatalf("x5c leaf does not verify against the root bundle: %v", err)
	}
	pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok {
		t.Fatalf("leaf key is %T, want ECDSA", leaf.PublicKey)
	}
	if len(p.sig) != 64 {
		t.Fatalf("signature is %d bytes, want 64 (r||s)", len(p.sig))
	}
	digest := sha256.Sum256([]byte(p.signed))
	r, s := new(big.Int).SetBytes(p.sig[:32]), new(big.Int).SetBytes(p.sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		t.Fatal("signature does not verify with the x5c key")
	}

	c := p.claims
	if c["iss"] != "test-issuer" || c["sub"] != "" || c["aud"] != "svc" || c["jti"] == "" {
		t.Errorf("iss, sub, aud, jti = %q, %q, %q, %q; want test-issuer, empty, svc (a string), random",
			c["iss"], c["sub"], c["aud"], c["jti"])
	}
	iat, exp, nbf := c["iat"].(float64), c["exp"].(float64), c["nbf"].(float64)
	if int64(iat) != now.Unix() || exp-iat != 300 || iat-nbf != 60 {
		t.Errorf("iat, exp, nbf = %v, %v, %v; want now, now+300, now-60", iat, exp, nbf)
	}
	acc, _ := json.Marshal(c["access"])
	if want := `[{"actions":["pull","push"],"name":"a/b","type":"repository"}]`; string(acc) != want {
		t.Errorf("access = %s, want %s", acc, want)
	}

	again, _ := iss.sign(iss.claims("svc", granted, now))
	if parseToken(t, again).claims["jti"] == c["jti"] {
		t.Error("two tokens have the same jti")
	}
}

// TestFrontDoor checks the token endpoint and the proxy against a stand-in
// registry that, like distribution, builds Location from the request's Host.
func TestFrontDoor(t *testing.T) {
	var upstreamHost string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamHost = r.Host
		w.Header().Set("Location", "http://"+r.Host+"/v2/a/blobs/uploads/u1")
		w.WriteHeader(http.StatusAccepted)
	}))
	defer upstream.Close()
	target, _ := url.Parse(upstream.URL)
	iss, err := newIssuer("test-issuer")
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(newHandler(iss, target))
	defer front.Close()
	frontHost := strings.TrimPrefix(front.URL, "http://")

	resp, err := http.Get(front.URL + "/token?service=svc&scope=repository:a:pull&scope=" +
		url.QueryEscape("repository:b:push repository:c:pull,push"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /token: %s %s", resp.Status, body)
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Token == "" || tr.AccessToken != tr.Token || tr.ExpiresIn != 300 {
		t.Errorf("token response %s: want token = access_token, expires_in 300", body)
	}
	if _, err := time.Parse(time.RFC3339, tr.IssuedAt); err != nil {
		t.Errorf("issued_at: %v", err)
	}
	acc, _ := json.Marshal(parseToken(t, tr.Token).claims["access"])
	want := `[{"actions":["pull"],"name":"a","type":"repository"},` +
		`{"actions":["push"],"name":"b","type":"repository"},` +
		`{"actions":["pull","push"],"name":"c","type":"repository"}]`
	if string(acc) != want {
		t.Errorf("access = %s, want %s", acc, want)
	}

	for _, q := range []string{"scope=repository:a:pull", "service=svc&scope=repository:a"} {
		resp, err := http.Get(front.URL + "/token?" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /token?%s: %s, want 400", q, resp.Status)
		}
	}

	resp, err = http.Post(front.URL+"/v2/a/blobs/uploads/", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST through the proxy: %s, want 202 from the stand-in", resp.Status)
	}
	if upstreamHost != frontHost {
		t.Errorf("registry saw Host %q, want the front door's %q", upstreamHost, frontHost)
	}
	if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, front.URL+"/") {
		t.Errorf("Location %q does not lead back to the front door %s", loc, front.URL)
	}
}

// challengeParam matches one key="value" of a WWW-Authenticate challenge.
var challengeParam = regexp.MustCompile(`(\w+)="([^"]*)"`)

// challenge sends GET url with the bearer token tok (none if empty) and
// returns the status and the parameters of the Bearer challenge.
func challenge(t *testing.T, u, tok string) (int, map[string]string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	params := map[string]string{}
	if h := resp.Header.Get("WWW-Authenticate"); h != "" {
		if !strings.HasPrefix(h, "Bearer ") {
			t.Fatalf("GET %s: challenge %q, want Bearer", u, h)
		}
		for _, m := range challengeParam.FindAllStringSubmatch(h, -1) {
			params[m[1]] = m[2]
		}
	}
	return resp.StatusCode, params
}

// fetchToken asks realm for a token for service and scope.
func fetchToken(t *testing.T, realm, service, scope string) string {
	t.Helper()
	resp, err := http.Get(realm + "?" + url.Values{"service": {service}, "scope": {scope}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr tokenResponse
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", realm, resp.Status, err)
	}
	return tr.Token
}

// TestRegistry pushes and reads an image through the real token registry of
// scripts/test, and checks that the registry itself enforces the tokens'
// scopes and signatures.
func TestRegistry(t *testing.T) {
	addr := testenv.TokenRegistry(t)
	base := "http://" + addr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	status, ch := challenge(t, base+"/v2/", "")
	if status != http.StatusUnauthorized || ch["realm"] != base+"/token" || ch["service"] == "" {
		t.Fatalf("GET /v2/: %d %v, want 401 with realm %s/token and a service", status, ch, base)
	}
	realm, service := ch["realm"], ch["service"]

	// go-containerregistry does the token dance itself, anonymously.
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(addr+"/tokentest/a:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	opts := []remote.Option{remote.WithAuth(authn.Anonymous), remote.WithContext(ctx)}
	if err := remote.Write(ref, img, opts...); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	desc, err := remote.Get(ref, opts...)
	if err != nil {
		t.Fatalf("get %s: %v", ref, err)
	}
	if want, _ := img.Digest(); desc.Digest != want {
		t.Errorf("get %s: digest %s, want %s", ref, desc.Digest, want)
	}
	tags, err := remote.List(ref.Context(), opts...)
	if err != nil {
		t.Fatalf("list %s: %v", ref.Context(), err)
	}
	if !slices.Contains(tags, "v1") {
		t.Errorf("tags of %s: %q, want v1 among them", ref.Context(), tags)
	}

	// A token for tokentest/a opens tokentest/a, and only it.
	tokA := fetchToken(t, realm, service, "repository:tokentest/a:pull")
	if status, ch := challenge(t, base+"/v2/tokentest/a/tags/list", tokA); status != http.StatusOK {
		t.Errorf("tags of tokentest/a with its token: %d %v, want 200", status, ch)
	}
	status, ch = challenge(t, base+"/v2/tokentest/b/tags/list", tokA)
	if status != http.StatusUnauthorized || ch["scope"] != "repository:tokentest/b:pull" ||
		ch["error"] != "insufficient_scope" || ch["realm"] != realm {
		t.Errorf("tags of tokentest/b with a token for tokentest/a: %d %v, "+
			"want 401 asking for scope repository:tokentest/b:pull, error insufficient_scope", status, ch)
	}

	// A token signed by a key the registry does not trust is refused.
	other, err := newIssuer("pin-test-issuer")
	if err != nil {
		t.Fatal(err)
	}
	forged, err := other.sign(other.claims(service,
		[]access{{Type: "repository", Name: "tokentest/a", Actions: []string{"pull"}}}, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if status, ch := challenge(t, base+"/v2/tokentest/a/tags/list", forged); status != http.StatusUnauthorized || ch["error"] != "invalid_token" {
		t.Errorf("tags of tokentest/a with an untrusted token: %d %v, want 401 invalid_token", status, ch)
	}

	// The registry's upload Location leads back to the front door.
	tokPush := fetchToken(t, realm, service, "repository:tokentest/a:pull,push")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v2/tokentest/a/blobs/uploads/", nil)
	req.Header.Set("Authorization", "Bearer "+tokPush)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusAccepted || !strings.HasPrefix(loc, base+"/v2/") {
		t.Errorf("start upload: %s, Location %q; want 202 and a Location under %s/v2/", resp.Status, loc, base)
	}
}
