// Command tokenserver is the front door of the bearer-token test registry
// that scripts/test starts (PIN_TEST_REGISTRY_TOKEN): a real CNCF
// distribution registry configured with `auth: token`, as Docker Hub and
// Harbor are, so that tests meet the whole token dance (401 challenge, GET
// on the realm, Bearer token) and a registry that verifies the token's
// signature and scopes itself.
//
// It does two things on one loopback address:
//
//   - GET /token?service=S&scope=repository:NAME:pull,push… answers
//     anonymously with a JWT (ES256, signed by a key made at start) that
//     grants exactly the repository scopes asked, with the actions pull and
//     push at most;
//   - every other request is proxied to the registry (-upstream), with the
//     Host header the client sent, so that the absolute Location URLs the
//     registry builds from it point at this front door.
//
// The registry and its token realm share one host:port because pin sends
// nothing to a realm that is not on the registry's own host:port.
//
// At start it writes the self-signed certificate of its signing key, as PEM,
// to -rootcert, for the registry's auth.token.rootcertbundle: the registry
// reads that file when it starts, so start this first. The file appears only
// once the front door listens. SIGTERM or SIGINT stops it.
//
// Usage:
//
//	tokenserver -addr 127.0.0.1:FRONT -upstream 127.0.0.1:REGISTRY -rootcert FILE [-issuer NAME]
//
// with, in the registry's configuration:
//
//	auth:
//	  token:
//	    realm: http://127.0.0.1:FRONT/token
//	    service: SERVICE   (any name: the token's audience is the service asked)
//	    issuer: NAME       (pin-test-issuer by default)
//	    rootcertbundle: FILE
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// tokenLifetime is how long a token is valid; the registry allows a minute
// of clock skew on each side.
const tokenLifetime = 5 * time.Minute

// grantable are the repository actions this server grants, to anyone.
var grantable = []string{"pull", "push"}

func main() {
	addr := flag.String("addr", "", "loopback `host:port` to listen on (required)")
	upstream := flag.String("upstream", "", "`host:port` of the registry to proxy to (required)")
	rootcert := flag.String("rootcert", "", "`file` to write the signing certificate to, as PEM (required)")
	issuerName := flag.String("issuer", "pin-test-issuer", "issuer (iss) of the tokens, as the registry's auth.token.issuer")
	flag.Parse()
	if *addr == "" || *upstream == "" || *rootcert == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	log.SetPrefix("tokenserver: ")
	log.SetFlags(0)
	if err := run(*addr, *upstream, *rootcert, *issuerName); err != nil {
		log.Fatal(err)
	}
}

func run(addr, upstream, rootcert, issuerName string) error {
	iss, err := newIssuer(issuerName)
	if err != nil {
		return err
	}
	target, err := url.Parse("http://" + upstream)
	if err != nil || target.Host != upstream {
		return fmt.Errorf("-upstream %q: want host:port", upstream)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err // "address already in use" tells scripts/test to pick another port
	}
	// Written once the port is ours: the file's presence tells scripts/test
	// that the registry can start and the front door answers.
	if err := writeFileAtomic(rootcert, iss.certPEM()); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: newHandler(iss, target), ReadHeaderTimeout: 30 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Printf("listening on %s, proxying to %s, issuer %q", ln.Addr(), upstream, issuerName)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close()
	}
	return nil
}

// writeFileAtomic writes b to path through a temporary file and a rename,
// so that a reader never sees half a certificate.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tokenserver-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// newHandler serves GET /token and proxies everything else to target.
func newHandler(iss *issuer, target *url.URL) http.Handler {
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			// SetURL sets Host to the target's. Keep the client's: the
			// registry builds absolute Location URLs (blob uploads,
			// manifests) from the request's Host, and those must lead back
			// here, not to the registry's own port.
			r.Out.Host = r.In.Host
		},
	}
	mux := http.NewServeMux()
	mux.Handle("/", proxy)
	mux.HandleFunc("GET /token", func(w http.ResponseWriter, r *http.Request) {
		serveToken(w, r, iss)
	})
	return mux
}

// tokenResponse is the answer of the token endpoint, in both the Docker
// (token) and the OAuth 2 (access_token) spelling.
type tokenResponse struct {
	Token       string `json:"token"`
	AccessToken string `json:"access_token"`
	ExpiresIn   int    `json:"expires_in"`
	IssuedAt    string `json:"issued_at"`
}

func serveToken(w http.ResponseWriter, r *http.Request, iss *issuer) {
	q := r.URL.Query()
	service := q.Get("service")
	if service == "" {
		http.Error(w, "service parameter required", http.StatusBadRequest)
		return
	}
	asked := q["scope"]
	granted, err := parseScopes(asked)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now()
	tok, err := iss.sign(iss.claims(service, granted, now))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	log.Printf("token for service %q, scopes %q", service, asked)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(tokenResponse{
		Token:       tok,
		AccessToken: tok,
		ExpiresIn:   int(tokenLifetime / time.Second),
		IssuedAt:    now.UTC().Format(time.RFC3339),
	})
}

// access is one entry of the token's access claim: what the bearer may do
// on one resource.
type access struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

// parseScopes turns the scope parameters of a token request into the access
// to grant. Each value holds one or more scopes separated by spaces, each
// scope is TYPE:NAME:ACTION[,ACTION…], and NAME may itself hold colons (a
// registry host:port). Only repository scopes are granted, with their
// actions limited to pull and push ("*" asks for both); a scope left with
// no action is dropped, as is any other type (registry:catalog:*).
func parseScopes(values []string) ([]access, error) {
	granted := []access{}
	for _, v := range values {
		for _, scope := range strings.Fields(v) {
			typ, rest, ok1 := strings.Cut(scope, ":")
			i := strings.LastIndexByte(rest, ':')
			if !ok1 || i <= 0 || typ == "" {
				return nil, fmt.Errorf("malformed scope %q: want TYPE:NAME:ACTIONS", scope)
			}
			name, actions := rest[:i], rest[i+1:]
			if typ != "repository" {
				continue
			}
			askedActs := strings.Split(actions, ",")
			var acts []string
			for _, a := range grantable {
				if actions == "*" || slices.Contains(askedActs, a) {
					acts = append(acts, a)
				}
			}
			if len(acts) > 0 {
				granted = append(granted, access{Type: typ, Name: name, Actions: acts})
			}
		}
	}
	return granted, nil
}

// issuer signs tokens with an ECDSA P-256 key whose self-signed certificate
// is the registry's root of trust.
type issuer struct {
	name string
	key  *ecdsa.PrivateKey
	cert []byte // DER of the self-signed certificate of key
}

func newIssuer(name string) (*issuer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		// The registry checks the chain, with its validity, on every request.
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return &issuer{name: name, key: key, cert: der}, nil
}

func (is *issuer) certPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: is.cert})
}

// claims is the JWT claim set distribution 2.8 reads. Its aud must be a
// string there: 2.8 does not accept the array form JWT also allows.
type claims struct {
	Issuer     string   `json:"iss"`
	Subject    string   `json:"sub"`
	Audience   string   `json:"aud"`
	Expiration int64    `json:"exp"`
	NotBefore  int64    `json:"nbf"`
	IssuedAt   int64    `json:"iat"`
	JWTID      string   `json:"jti"`
	Access     []access `json:"access"`
}

// claims returns the claims of an anonymous token for service, issued at now.
func (is *issuer) claims(service string, granted []access, now time.Time) claims {
	jti := make([]byte, 16)
	rand.Read(jti)
	return claims{
		Issuer:     is.name,
		Audience:   service,
		Expiration: now.Add(tokenLifetime).Unix(),
		NotBefore:  now.Add(-time.Minute).Unix(),
		IssuedAt:   now.Unix(),
		JWTID:      base64.RawURLEncoding.EncodeToString(jti),
		Access:     granted,
	}
}

// jwtHeader names the signing key by its certificate chain (x5c, standard
// base64 DER, leaf first): the registry verifies the chain against its root
// bundle and takes the key from the leaf.
type jwtHeader struct {
	Type string   `json:"typ"`
	Alg  string   `json:"alg"`
	X5c  []string `json:"x5c"`
}

// sign returns c as a compact JWS: base64url (no padding) of the header,
// of the claims and of the ES256 signature, r and s as 32 bytes each.
func (is *issuer) sign(c claims) (string, error) {
	h, err := json.Marshal(jwtHeader{Type: "JWT", Alg: "ES256", X5c: []string{base64.StdEncoding.EncodeToString(is.cert)}})
	if err != nil {
		return "", err
	}
	p, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	digest := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, is.key, digest[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signed + "." + enc.EncodeToString(sig), nil
}
