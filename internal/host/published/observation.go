package published

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pin-tool/pin/internal/host"
)

// Schema is the version of the observation format.
const Schema = 1

// MediaType is the media type of an observation: a file's content, and
// the layer of an OCI observation artifact.
const MediaType = "application/vnd.pin.observation.v1+json"

// ConfigMediaType is the config media type of an OCI observation
// artifact (its artifact type, for registries that list it).
const ConfigMediaType = "application/vnd.pin.observation.config.v1+json"

// Observation is what one host runs, as read at one time.
type Observation struct {
	// Host is the catalogue's name of the host read; a reader refuses an
	// observation published for another host.
	Host string
	// Platform is the host's own platform, "os/arch[/variant]" (the
	// engine's, not an image's).
	Platform string
	// ReadAt is when the host was read, in UTC, to the second.
	ReadAt time.Time
	// Snapshot is what it runs.
	Snapshot *host.Snapshot
}

// wire is the JSON form; the snapshot keeps its own format.
type wire struct {
	Schema   int             `json:"pin_observation"`
	Host     string          `json:"host"`
	Platform string          `json:"platform"`
	ReadAt   time.Time       `json:"read_at"`
	Snapshot json.RawMessage `json:"snapshot"`
}

// Marshal renders the observation, deterministically: the same host
// state and time give the same bytes.
func (o *Observation) Marshal() ([]byte, error) {
	if o.Host == "" || o.Snapshot == nil || o.ReadAt.IsZero() {
		return nil, errors.New("an observation needs a host, a snapshot and the time it was read")
	}
	s := *o.Snapshot
	s.Host = o.Host
	snap, err := s.Marshal()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(wire{Schema: Schema, Host: o.Host, Platform: o.Platform,
		ReadAt: o.ReadAt.UTC().Truncate(time.Second), Snapshot: snap}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Parse reads an observation. The snapshot inside is read by
// host.ParseSnapshot, with its checks; an error is one of content, to be
// reported with where it was read.
func Parse(data []byte) (*Observation, error) {
	var w wire
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("not a pin observation: %w", err)
	}
	if w.Schema != Schema {
		return nil, fmt.Errorf("observation schema %d is not supported (this pin reads pin_observation = %d)", w.Schema, Schema)
	}
	if w.Host == "" || w.ReadAt.IsZero() || len(w.Snapshot) == 0 {
		return nil, errors.New("an observation needs host, read_at and snapshot")
	}
	s, err := host.ParseSnapshot(w.Snapshot, w.Host)
	if err != nil {
		return nil, fmt.Errorf("its snapshot: %w", err)
	}
	if s.Host != w.Host {
		return nil, fmt.Errorf("it names host %q, its snapshot %q", w.Host, s.Host)
	}
	return &Observation{Host: w.Host, Platform: w.Platform, ReadAt: w.ReadAt.UTC(), Snapshot: s}, nil
}
