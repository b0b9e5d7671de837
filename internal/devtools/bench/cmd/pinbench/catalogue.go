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
// through the proxy at addr, and the snapshots of hosts fleet-1 …
// fleet-<hosts> that run the at-least-running modules' newest releases,
// spread round-robin (module k of them on host k mod hosts + 1): the
// incident, at scale.
func writeCatalogue(dir, addr string, fleet []*seeded, hosts int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by pinbench: %d modules on the registry behind the bench proxy.\n\n", len(fleet))
	fmt.Fprintf(&b, "registry %q {\n  insecure = true\n}\n\n", addr)
	for h := 1; h <= hosts; h++ {
		fmt.Fprintf(&b, "host \"fleet-%d\" {\n  snapshot = \"fleet-%d.json\"\n}\n", h, h)
	}
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
	type snapshot struct {
		Schema     int         `json:"schema"`
		Host       string      `json:"host"`
		ImageStore string      `json:"image_store"`
		Containers []container `json:"containers"`
		Images     []img       `json:"images"`
	}
	snaps := make([]*snapshot, hosts)
	for h := range snaps {
		snaps[h] = &snapshot{Schema: 1, Host: fmt.Sprintf("fleet-%d", h+1), ImageStore: "classic", Containers: []container{}, Images: []img{}}
	}
	running := 0

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
			snap := snaps[running%hosts]
			running++
			fmt.Fprintf(&b, "  runs_on %q { container = %q }\n", snap.Host, p.Module)
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
	for _, snap := range snaps {
		js, err := json.MarshalIndent(snap, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, snap.Host+".json"), js, 0o644); err != nil {
			return err
		}
	}
	return nil
}
