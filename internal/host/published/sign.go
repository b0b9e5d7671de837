package published

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/pin-tool/pin/internal/atomicfile"
	"github.com/pin-tool/pin/internal/verify/sigstore"
)

// Signer signs observations with a cosign private key.
type Signer struct {
	s signature.Signer
	// Fingerprint is the key's, as a lock and a refusal name it.
	Fingerprint string
}

// LoadKey reads a cosign private key file (cosign.key: "ENCRYPTED
// SIGSTORE PRIVATE KEY" or "ENCRYPTED COSIGN PRIVATE KEY", decrypted with
// password, as cosign reads COSIGN_PASSWORD), or an unencrypted PEM
// private key.
func LoadKey(path string, password []byte) (*Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(b, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w (is COSIGN_PASSWORD its password?)", path, err)
	}
	s, err := NewSigner(priv)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return s, nil
}

// NewSigner signs with priv (ECDSA, RSA or Ed25519, as cosign's keys).
func NewSigner(priv crypto.PrivateKey) (*Signer, error) {
	s, err := signature.LoadSigner(priv, crypto.SHA256)
	if err != nil {
		return nil, err
	}
	pub, err := s.PublicKey()
	if err != nil {
		return nil, err
	}
	fp, err := sigstore.Fingerprint(pub)
	if err != nil {
		return nil, err
	}
	return &Signer{s: s, Fingerprint: fp}, nil
}

// Sign returns the raw signature of body.
func (s *Signer) Sign(body []byte) ([]byte, error) {
	return s.s.SignMessage(bytes.NewReader(body))
}

// SignatureFile is the file beside an observation file that holds its
// signature.
func SignatureFile(path string) string { return path + ".sig" }

// WriteFile writes the observation to path and its base64 signature (as
// "cosign sign-blob" prints it) to path.sig, as a pair: both files are
// judged before either is written (each must be absent, empty or pin's own
// — an observation, a signature — unless force), the signature is written
// first, so that a reader never finds new content beside an old signature
// for long (it would refuse it, not believe it), and when the body cannot
// be written the signature gets its old content back. A failed write
// leaves both files as they were.
func WriteFile(path string, o *Observation, s *Signer, force bool) error {
	body, err := o.Marshal()
	if err != nil {
		return err
	}
	sig, err := s.Sign(body)
	if err != nil {
		return fmt.Errorf("signing the observation of %s: %w", o.Host, err)
	}
	b64 := []byte(base64.StdEncoding.EncodeToString(sig) + "\n")
	err = atomicfile.WriteAll(
		atomicfile.File{Path: SignatureFile(path), Bytes: b64, Options: atomicfile.Options{Owned: IsSignature, Force: force}},
		atomicfile.File{Path: path, Bytes: body, Options: atomicfile.Options{Owned: IsObservation, Force: force}})
	switch {
	case errors.Is(err, atomicfile.ErrNotOwned):
		return fmt.Errorf("%w: it is not an observation or a signature pin observe wrote; name another file with --output, or pass --force to replace it; nothing written", err)
	case errors.Is(err, atomicfile.ErrDanglingLink):
		return fmt.Errorf("%w: create the file it names, or remove the link; nothing written", err)
	case err != nil:
		return fmt.Errorf("%w; nothing written", err)
	}
	return nil
}

// IsObservation tells whether b is, by its format, a file pin observe
// wrote: a JSON object with the pin_observation member.
func IsObservation(b []byte) bool {
	var head struct {
		Schema *json.RawMessage `json:"pin_observation"`
	}
	return json.Unmarshal(b, &head) == nil && head.Schema != nil
}

// IsSignature tells whether b is, by its format, a signature file pin
// observe wrote (or cosign sign-blob printed): one line of base64.
func IsSignature(b []byte) bool {
	s := strings.TrimSpace(string(b))
	if s == "" || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}
