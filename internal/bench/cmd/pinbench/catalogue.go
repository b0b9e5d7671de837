package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// writeCatalogue writes dir/catalogue.hcl for the seeded fleet as seen
// through the proxy at addr, and the snapshot of host fleet-1 that runs
// every at-least-running module's newest release: the incident, at scale.
func writeCatalogue(dir, addr string, fleet []*seeded) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by pinbench: %d modules on the registry behind the bench proxy.\n\n", len(fleet))
	fmt.Fprintf(&b, "registry %q {\n  insecure = true\n}\n\n", addr)
	fmt.Fprintf(&b, "host \"fleet-1\" {\n  snapshot = \"fleet-1.json\"\n}\n")
	type container struct {
		ID      string            `json:"id"`
		Name    string            `json:"name"`
		Image   string            `json:"image"`
		ImageID string            `json:"image_id"`
		State   string            `json:"state"`
		Labels  map[string]string `json:"labels,omitempty"`
	}
	type img struct {
		ID          string            `json:"id"`
		RepoTags    []string          `json:"repo_tags,omitempty"`
		RepoDigests []string          `json:"repo_digests,omitempty"`
		Created     time.Time         `json:"created"`
		Labels      map[string]string `json:"labels,omitempty"`
		OS          string            `json:"os,omitempty"`
		Arch        string            `json:"architecture,omitempty"`
	}
	snap := struct {
		Schema     int         `json:"schema"`
		Host       string      `json:"host"`
		ImageStore string      `json:"image_store"`
		Containers []container `json:"containers"`
		Images     []img       `json:"images"`
	}{Schema: 1, Host: "fleet-1", ImageStore: "classic", Containers: []container{}, Images: []img{}}

	for i, s := range fleet {
		p := s.p
		repo := addr + "/" + p.Repo
		pin := s.at(p.Pin)
		fmt.Fprintf(&b, "\nmodule %q {\n", p.Module)
		fmt.Fprintf(&b, "  image  = %q\n", repo)
		fmt.Fprintf(&b, "  policy = %q\n", p.Policy)
		fmt.Fprintf(&b, "  pin    = %q\n", p.Pin+"@"+pin.digest)
		if p.Follow != "" {
			fmt.Fprintf(&b, "  tag    = %q\n", p.Follow)
		}
		if p.Versioning != "" {
			fmt.Fprintf(&b, "  versioning = %q\n", p.Versioning)
		}
		if p.Running != "" {
			fmt.Fprintf(&b, "  runs_on \"fleet-1\" { container = %q }\n", p.Module)
			run := s.at(p.Running)
			cf, err := run.amd64.ConfigFile()
			if err != nil {
				return err
			}
			snap.Containers = append(snap.Containers, container{
				ID: fmt.Sprintf("%064x", i+1), Name: p.Module, Image: repo + ":" + p.Running,
				ImageID: run.configDigest, State: "running",
			})
			snap.Images = append(snap.Images, img{
				ID: run.configDigest, RepoTags: []string{repo + ":" + p.Running},
				RepoDigests: []string{repo + "@" + run.digest},
				Created:     cf.Created.Time.UTC(), Labels: cf.Config.Labels, OS: "linux", Arch: "amd64",
			})
		}
		b.WriteString("}\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	js, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "fleet-1.json"), js, 0o644)
}
