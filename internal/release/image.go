package release

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths and the user inside the image.
const (
	// BinaryPath is pin's path in the image, its entrypoint.
	BinaryPath = "/usr/local/bin/pin"
	// WorkDir is the working directory: mount the repository that holds
	// catalogue.hcl and pin.lock.hcl here.
	WorkDir = "/work"
	// UID and GID are the non-root user pin runs as.
	UID, GID = 65532, 65532
	// User is its name, in /etc/passwd.
	User = "pin"
	// EnvContainerImage is set (to "1") in the image: pin then says, of
	// a write its user may not make in a mounted folder, to run the image
	// as the folder's owner (docker run --user). cmd/pin reads it.
	EnvContainerImage = "PIN_CONTAINER_IMAGE"
)

// Options describe the image.
type Options struct {
	// Arch is the GOARCH of the binary and the image's architecture
	// (linux only); "amd64" when empty.
	Arch string
	// Version and Revision are pin's version ("v0.3.0", or "devel") and
	// the VCS revision it was built from; they become labels.
	Version, Revision string
	// Created is the image's creation date, and the files' modification
	// time: the commit's date keeps the image reproducible. Zero: the Unix
	// epoch.
	Created time.Time
	// Source is the repository URL label; DefaultSource when empty.
	Source string
	// CACerts, when not nil, is written to /etc/ssl/certs/ca-certificates.crt
	// so that pin can reach registries over TLS; the host's bundle is the
	// usual choice (see HostCACerts).
	CACerts []byte
}

// DefaultSource is the org.opencontainers.image.source label.
const DefaultSource = "https://github.com/pin-tool/pin"

func (o Options) arch() string {
	if o.Arch == "" {
		return "amd64"
	}
	return o.Arch
}

// BuildBinary builds cmd/pin of the module at moduleDir as a static linux
// binary (CGO_ENABLED=0, -trimpath) for o.Arch, and returns its bytes.
func BuildBinary(ctx context.Context, moduleDir string, o Options) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "pin-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "pin")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/pin")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.arch())
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building pin: %w\n%s", err, b)
	}
	return os.ReadFile(out)
}

// Image is pin's image: binary at BinaryPath, an /etc/passwd and
// /etc/group naming the user, a home it owns (which any user may write,
// for docker run --user), a working directory it owns, a /tmp, and the CA
// bundle when given, in one layer on an empty base; run as UID:GID with
// pin as the entrypoint.
func Image(binary []byte, o Options) (v1.Image, error) {
	created := o.Created
	if created.IsZero() {
		created = time.Unix(0, 0)
	}
	created = created.UTC()
	layer, err := rootfs(binary, o, created)
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, layer)
	if err != nil {
		return nil, fmt.Errorf("appending the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", o.arch()
	cf.Config.User = fmt.Sprintf("%d:%d", UID, GID)
	cf.Config.Entrypoint = []string{BinaryPath}
	cf.Config.Cmd = []string{"--help"}
	cf.Config.WorkingDir = WorkDir
	cf.Config.Env = []string{"PATH=/usr/local/bin", "HOME=/home/" + User, "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", EnvContainerImage + "=1"}
	cf.Config.Labels = Labels(o, created)
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, fmt.Errorf("setting the config: %w", err)
	}
	if img, err = mutate.CreatedAt(img, v1.Time{Time: created}); err != nil {
		return nil, fmt.Errorf("setting the date: %w", err)
	}
	return img, nil
}

// Labels are the image's org.opencontainers.image.* labels.
func Labels(o Options, created time.Time) map[string]string {
	source := o.Source
	if source == "" {
		source = DefaultSource
	}
	l := map[string]string{
		"org.opencontainers.image.title":         "pin",
		"org.opencontainers.image.description":   "Pin container images without ever downgrading what runs",
		"org.opencontainers.image.source":        source,
		"org.opencontainers.image.url":           source,
		"org.opencontainers.image.documentation": source + "#readme",
		"org.opencontainers.image.licenses":      "Apache-2.0",
		"org.opencontainers.image.created":       created.UTC().Format(time.RFC3339),
	}
	if o.Version != "" {
		l["org.opencontainers.image.version"] = o.Version
	}
	if o.Revision != "" {
		l["org.opencontainers.image.revision"] = o.Revision
	}
	return l
}

// HostCACerts reads the host's CA bundle, or nil when it has none at the
// usual Debian and Red Hat paths.
func HostCACerts() []byte {
	for _, p := range []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"} {
		if b, err := os.ReadFile(p); err == nil {
			return b
		}
	}
	return nil
}

// rootfs is the image's one layer, written in a fixed order with fixed
// owners and dates, so that its digest depends on the inputs only.
func rootfs(binary []byte, o Options, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, uid, gid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: gid, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, content []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(content)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(content)
		return err
	}
	home := "home/" + User
	steps := []func() error{
		func() error { return dir("etc", 0o755, 0, 0) },
		func() error {
			return file("etc/passwd", 0o644, fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:pin:/%s:/sbin/nologin\n", User, UID, GID, home))
		},
		func() error { return file("etc/group", 0o644, fmt.Appendf(nil, "root:x:0:\n%s:x:%d:\n", User, GID)) },
		func() error { return dir("home", 0o755, 0, 0) },
		// Writable by any user, as /tmp is: run with docker run --user
		// (the mounted folder's owner), pin keeps its cache there too.
		func() error { return dir(home, 0o1777, UID, GID) },
		func() error { return dir("tmp", 0o1777, 0, 0) },
		func() error { return dir("usr", 0o755, 0, 0) },
		func() error { return dir("usr/local", 0o755, 0, 0) },
		func() error { return dir("usr/local/bin", 0o755, 0, 0) },
		func() error { return file(BinaryPath[1:], 0o755, binary) },
		func() error { return dir(WorkDir[1:], 0o755, UID, GID) },
	}
	if o.CACerts != nil {
		steps = append(steps,
			func() error { return dir("etc/ssl", 0o755, 0, 0) },
			func() error { return dir("etc/ssl/certs", 0o755, 0, 0) },
			func() error { return file("etc/ssl/certs/ca-certificates.crt", 0o644, o.CACerts) },
		)
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, fmt.Errorf("writing the layer: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
