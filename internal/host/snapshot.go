package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	// State is the engine's state word (see the State constants), kept as
	// the engine or the snapshot file says it. A Kubernetes host says
	// "running", "waiting: <reason>" or "terminated: <reason>". Every
	// container has one: a snapshot without it does not read.
	State  string            `json:"state"`
	Labels map[string]string `json:"labels,omitempty"`
	// Workload and Pod are set for a container of a Kubernetes pod: what
	// owns the pod ("deployment/forgejo", "statefulset/db", or
	// "pod/<name>" for a pod nothing owns), and the pod's name. Labels are
	// then the pod's labels.
	Workload string `json:"workload,omitempty"`
	Pod      string `json:"pod,omitempty"`
	// StartedAt is when the engine last started the container (its
	// State.StartedAt, in UTC): a restart, by the restart policy or by
	// hand, starts it anew. RestartCount is how many times the engine
	// restarted it under its restart policy (a restart by hand, docker
	// restart, is not counted by the engine; it shows in StartedAt).
	// Reading them costs an inspect per container, so an adapter reads
	// them only when asked (docker.Host.StartTimes, kubernetes.Host.StartTimes); zero otherwise,
	// and for a container never started. Both are left out of the JSON
	// when zero, so files written before them read, and write, alike.
	StartedAt    time.Time `json:"started_at,omitzero"`
	RestartCount int       `json:"restart_count,omitempty"`
	// Health is what the engine reports of the container's health, read
	// with StartedAt (an adapter reads it only when asked, as StartedAt).
	Health
}

// Health is what an engine reports of a container's health: how its last
// run ended, its health check's verdict, and, on Kubernetes, its pod's
// Ready condition. Every field is left out of the JSON when not known,
// so snapshots and published observations written before them read, and
// write, alike: a field not known is not read, never "healthy".
type Health struct {
	// ExitCode is the exit code of the container's last run once it
	// ended (State.ExitCode; a Kubernetes container's last termination),
	// and FinishedAt when it ended, in UTC; zero when it has not ended or
	// is not known.
	ExitCode   int       `json:"exit_code,omitempty"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// Check is the health check's verdict (HealthHealthy, HealthUnhealthy,
	// HealthStarting); "" for a container without a health check, and
	// when not read (HealthNone is never stored: an engine's "none" is
	// "", so that a snapshot of containers without checks stays as it
	// was).
	Check string `json:"health,omitempty"`
	// Ready is a Kubernetes pod's Ready condition; nil off Kubernetes and
	// when not read.
	Ready *bool `json:"ready,omitempty"`
	// Since is when the health check's verdict or the Ready condition
	// became what they say, as far as the engine tells (the first probe
	// of the verdict's current streak in Docker's health log, the Ready
	// condition's last transition); zero when not known.
	Since time.Time `json:"health_since,omitzero"`
}

// The verdicts of a Docker (and Podman) health check.
const (
	HealthHealthy   = "healthy"
	HealthUnhealthy = "unhealthy"
	// HealthStarting: the check has not passed yet (within its start
	// period, or before its first probe): not yet healthy.
	HealthStarting = "starting"
	// HealthNone: the engine's word for a container without a health
	// check; read as "".
	HealthNone = "none"
)

// Started reports whether the snapshot knows when the container started.
func (c Container) Started() bool { return !c.StartedAt.IsZero() }

// The states of a Docker Engine (and Podman) container. The engine lists
// every container whatever its state, and so does a snapshot.
const (
	// StateCreated: created and never started. The container has run
	// nothing yet; it only says which image someone meant to run.
	StateCreated = "created"
	StateRunning = "running"
	// StatePaused: running, its processes frozen.
	StatePaused = "paused"
	// StateRestarting: between two runs under a restart policy.
	StateRestarting = "restarting"
	// StateExited: started once and stopped since.
	StateExited = "exited"
	// StateRemoving: being removed.
	StateRemoving = "removing"
	// StateDead: a removal that failed half way.
	StateDead = "dead"
)

// States a Kubernetes host reports that say nothing runs the image as the
// workload's own container (see package host/kubernetes).
const (
	// StateScaledToZero is a container of a workload scaled to zero,
	// read from its pod template: no replica runs it.
	StateScaledToZero = "scaled to zero"
	// EphemeralPrefix starts the state of an ephemeral (debug) container,
	// "ephemeral: running": it was added to a pod by kubectl debug, is not
	// part of the workload, and touches its data only by hand.
	EphemeralPrefix = "ephemeral: "
)

// Running reports whether the container runs: running, paused (it still
// holds its data and counts) or restarting.
func (c Container) Running() bool {
	return c.State == StateRunning || c.State == StatePaused || c.State == StateRestarting
}

// NeverStarted reports whether the container was created and never started
// (State "created"). Unlike an exited container, it has never run its
// image: it is not evidence of what the host runs or ran. A container that
// was started and then stopped is "exited", never "created" again.
func (c Container) NeverStarted() bool {
	return c.State == StateCreated
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
// hostName names the host for a docker inspect array, which does not say
// which host it came from, and for pin's JSON when it names none.
//
// Content that is not a snapshot gives a *SnapshotError that is
// ErrBadSnapshot, with the line and column where encoding/json gives one.
// Every container must have a name, an image ID and a state; every image
// an ID.
func ParseSnapshot(data []byte, hostName string) (*Snapshot, error) {
	s, err := parseSnapshot(data, hostName)
	if err != nil {
		var se *SnapshotError
		if !errors.As(err, &se) {
			se = malformed(data, 0, err)
		}
		return nil, se
	}
	return s, nil
}

func parseSnapshot(data []byte, hostName string) (*Snapshot, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	base := int64(len(data) - len(trimmed))
	trimmed = bytes.TrimRight(trimmed, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("snapshot is empty")
	}
	if trimmed[0] == '[' {
		return parseInspect(data, base, trimmed, hostName)
	}
	var s Snapshot
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, malformed(data, base, fmt.Errorf("reading pin snapshot: %w", err))
	}
	if rest := trimmed[dec.InputOffset():]; len(rest) > 0 {
		// trimmed ends in a non-space byte, so rest has one.
		at := dec.InputOffset() + int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r\n"))) + 1
		e := malformed(data, base, errors.New("reading pin snapshot: data after the snapshot's object"))
		e.Line, e.Column = position(data, base+at)
		return nil, e
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
		if c.Name == "" || c.ImageID == "" || c.State == "" {
			return fmt.Errorf("container %q: a container needs a name, an image_id and a state", c.Name)
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
	// RestartCount is a container's (top level in docker inspect).
	RestartCount int `json:"RestartCount"`
	Config       *struct {
		Image  string            `json:"Image"`
		Labels map[string]string `json:"Labels"`
	} `json:"Config"`
}

// parseInspect reads trimmed, a docker inspect array found at offset base
// of data.
func parseInspect(data []byte, base int64, trimmed []byte, hostName string) (*Snapshot, error) {
	var entries []inspectEntry
	if err := json.Unmarshal(trimmed, &entries); err != nil {
		return nil, malformed(data, base, fmt.Errorf("reading docker inspect output: %w", err))
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
				Status     string `json:"Status"`
				StartedAt  string `json:"StartedAt"`
				FinishedAt string `json:"FinishedAt"`
				ExitCode   int    `json:"ExitCode"`
				Health     *struct {
					Status string `json:"Status"`
					Log    []struct {
						Start    time.Time `json:"Start"`
						ExitCode int       `json:"ExitCode"`
					} `json:"Log"`
				} `json:"Health"`
			}
			if err := json.Unmarshal(e.State, &st); err != nil {
				return nil, fmt.Errorf("docker inspect entry %d: reading State: %w", n, err)
			}
			c := Container{ID: e.ID, Name: strings.TrimPrefix(e.Name, "/"), ImageID: e.Image, State: st.Status, Labels: labels, RestartCount: e.RestartCount}
			started, err := ParseStartedAt(st.StartedAt)
			if err != nil {
				return nil, fmt.Errorf("docker inspect container %s: %w", c.Name, err)
			}
			c.StartedAt = started
			var check string
			var log []Probe
			if st.Health != nil {
				check = st.Health.Status
				for _, p := range st.Health.Log {
					log = append(log, Probe{Start: p.Start, ExitCode: p.ExitCode})
				}
			}
			if c.Health, err = EngineHealth(c.State, st.ExitCode, st.FinishedAt, check, log); err != nil {
				return nil, fmt.Errorf("docker inspect container %s: %w", c.Name, err)
			}
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

// ParseStartedAt reads an engine's State.StartedAt (RFC 3339 with
// nanoseconds): "" and the engine's zero date ("0001-01-01T00:00:00Z",
// a container never started) are the zero time; a date is returned in
// UTC.
func ParseStartedAt(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("started at %q: %w", s, err)
	}
	if t.Year() <= 1 {
		return time.Time{}, nil
	}
	return t.UTC(), nil
}

// SnapshotFile is a host read from a snapshot file.
type SnapshotFile struct {
	HostName string
	Path     string
}

// Observe reads the snapshot file. Every error is a *SnapshotError naming
// the host and the file: ErrBadSnapshot for malformed content, the fs error
// (fs.ErrNotExist for a missing file) for a file it cannot read.
func (f SnapshotFile) Observe(ctx context.Context) (*Snapshot, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, &SnapshotError{Host: f.HostName, Path: f.Path, Err: err}
	}
	s, err := ParseSnapshot(data, f.HostName)
	if err != nil {
		se := err.(*SnapshotError) // ParseSnapshot's contract
		se.Host, se.Path = f.HostName, f.Path
		return nil, se
	}
	return s, nil
}
