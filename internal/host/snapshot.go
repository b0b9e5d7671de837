package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// SnapshotSchema is the version of pin's snapshot format.
const SnapshotSchema = 1

// Snapshot is what one host runs: its containers and the images they use.
type Snapshot struct {
	Schema int    `json:"schema"`
	Host   string `json:"host"`
	// ImageStore is "classic" (image ID = config digest) or "containerd"
	// (image ID = manifest or index digest); empty when not known.
	ImageStore string      `json:"image_store,omitempty"`
	Containers []Container `json:"containers"`
	Images     []Image     `json:"images"`
}

// Container is one container on a host.
type Container struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Image is the reference the container was started from, as given
	// ("registry.example.org/forge/forgejo:1.27.3").
	Image string `json:"image"`
	// ImageID is the host's ID of the image it runs.
	ImageID string `json:"image_id"`
	// State is the engine's state word: running, exited, created, paused…
	State  string            `json:"state"`
	Labels map[string]string `json:"labels,omitempty"`
	// Workload and Pod are set for a container of a Kubernetes pod: what
	// owns the pod ("deployment/forgejo", "statefulset/db", or
	// "pod/<name>" for a pod nothing owns), and the pod's name. Labels are
	// then the pod's labels.
	Workload string `json:"workload,omitempty"`
	Pod      string `json:"pod,omitempty"`
}

// Running reports whether the container runs (a paused one still holds its
// data and counts).
func (c Container) Running() bool {
	return c.State == "running" || c.State == "paused" || c.State == "restarting"
}

// Image is one image in a host's store.
type Image struct {
	ID          string            `json:"id"`
	RepoTags    []string          `json:"repo_tags,omitempty"`
	RepoDigests []string          `json:"repo_digests,omitempty"`
	Created     time.Time         `json:"created"`
	Labels      map[string]string `json:"labels,omitempty"`
	OS          string            `json:"os,omitempty"`
	Arch        string            `json:"architecture,omitempty"`
	Variant     string            `json:"variant,omitempty"`
}

// Platform renders "os/arch[/variant]", or "" when unknown.
func (i Image) Platform() string {
	if i.OS == "" || i.Arch == "" {
		return ""
	}
	p := i.OS + "/" + i.Arch
	if i.Variant != "" {
		p += "/" + i.Variant
	}
	return p
}

// Image returns the image with the given ID, or false.
func (s *Snapshot) Image(id string) (Image, bool) {
	for _, i := range s.Images {
		if i.ID == id {
			return i, true
		}
	}
	return Image{}, false
}

// Normalise sorts containers and images so that the same host state gives
// the same bytes.
func (s *Snapshot) Normalise() {
	slices.SortFunc(s.Containers, func(a, b Container) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	slices.SortFunc(s.Images, func(a, b Image) int { return strings.Compare(a.ID, b.ID) })
	for i := range s.Images {
		slices.Sort(s.Images[i].RepoTags)
		slices.Sort(s.Images[i].RepoDigests)
	}
}

// Marshal renders a snapshot as indented JSON, deterministically.
func (s *Snapshot) Marshal() ([]byte, error) {
	c := *s
	c.Schema = SnapshotSchema
	c.Normalise()
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseSnapshot reads pin's snapshot JSON or a "docker inspect" array.
// hostName names the host for messages and for a docker inspect array,
// which does not say which host it came from.
func ParseSnapshot(data []byte, hostName string) (*Snapshot, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("snapshot is empty")
	}
	if trimmed[0] == '[' {
		return parseInspect(trimmed, hostName)
	}
	var s Snapshot
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("reading pin snapshot: %w", err)
	}
	if s.Schema != SnapshotSchema {
		return nil, fmt.Errorf("snapshot schema %d is not supported (this pin reads schema %d)", s.Schema, SnapshotSchema)
	}
	if s.Host == "" {
		s.Host = hostName
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	s.Normalise()
	return &s, nil
}

func (s *Snapshot) check() error {
	for _, c := range s.Containers {
		if c.Name == "" || c.ImageID == "" {
			return fmt.Errorf("container %q: a container needs a name and an image_id", c.Name)
		}
	}
	for _, i := range s.Images {
		if i.ID == "" {
			return fmt.Errorf("an image has no id")
		}
	}
	return nil
}

// inspectEntry holds the fields pin reads from one element of a docker
// inspect array; containers and images have different ones.
type inspectEntry struct {
	ID          string          `json:"Id"`
	Name        string          `json:"Name"`
	Image       string          `json:"Image"`
	State       json.RawMessage `json:"State"`
	RepoTags    []string        `json:"RepoTags"`
	RepoDigests []string        `json:"RepoDigests"`
	Created     string          `json:"Created"`
	OS          string          `json:"Os"`
	Arch        string          `json:"Architecture"`
	Variant     string          `json:"Variant"`
	Config      *struct {
		Image  string            `json:"Image"`
		Labels map[string]string `json:"Labels"`
	} `json:"Config"`
}

func parseInspect(data []byte, hostName string) (*Snapshot, error) {
	var entries []inspectEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("reading docker inspect output: %w", err)
	}
	s := &Snapshot{Schema: SnapshotSchema, Host: hostName}
	for n, e := range entries {
		var labels map[string]string
		if e.Config != nil {
			labels = e.Config.Labels
		}
		switch {
		case len(e.State) > 0:
			var st struct {
				Status string `json:"Status"`
			}
			if err := json.Unmarshal(e.State, &st); err != nil {
				return nil, fmt.Errorf("docker inspect entry %d: reading State: %w", n, err)
			}
			c := Container{ID: e.ID, Name: strings.TrimPrefix(e.Name, "/"), ImageID: e.Image, State: st.Status, Labels: labels}
			if e.Config != nil {
				c.Image = e.Config.Image
			}
			s.Containers = append(s.Containers, c)
		case e.ID != "":
			img := Image{ID: e.ID, RepoTags: e.RepoTags, RepoDigests: e.RepoDigests, Labels: labels, OS: e.OS, Arch: e.Arch, Variant: e.Variant}
			if e.Created != "" {
				t, err := time.Parse(time.RFC3339Nano, e.Created)
				if err != nil {
					return nil, fmt.Errorf("docker inspect image %s: created %q: %w", e.ID, e.Created, err)
				}
				img.Created = t.UTC()
			}
			s.Images = append(s.Images, img)
		default:
			return nil, fmt.Errorf("docker inspect entry %d is neither a container nor an image", n)
		}
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	s.Normalise()
	return s, nil
}

// SnapshotFile is a host read from a snapshot file.
type SnapshotFile struct {
	HostName string
	Path     string
}

// Observe reads the snapshot file.
func (f SnapshotFile) Observe(ctx context.Context) (*Snapshot, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot of host %s: %w", f.HostName, err)
	}
	s, err := ParseSnapshot(data, f.HostName)
	if err != nil {
		return nil, fmt.Errorf("snapshot of host %s (%s): %w", f.HostName, f.Path, err)
	}
	return s, nil
}
