package main

import (
	"errors"
	"slices"

	"github.com/pin-tool/pin/resolve"
)

// outdatedOutput is the report, as JSON (schema 1) and as the source of the
// table and the annotations.
type outdatedOutput struct {
	Schema    int              `json:"schema"`
	Command   string           `json:"command"`
	Catalogue string           `json:"catalogue"`
	Lock      string           `json:"lock"`
	FailOn    []string         `json:"fail_on"`
	Failed    bool             `json:"failed"`
	Modules   []outdatedModule `json:"modules"`
}

type outdatedModule struct {
	Name string `json:"name"`
	// Environment is the environment whose lock and hosts the module
	// was judged by; empty without environments.
	Environment string            `json:"environment,omitempty"`
	Policy      string            `json:"policy"`
	Statuses    []string          `json:"statuses"`
	Locked      *outdatedImage    `json:"locked"`
	Running     []outdatedRunning `json:"running"`
	Missing     []string          `json:"missing,omitempty"`
	Upstream    *outdatedImage    `json:"upstream"`
	Hint        string            `json:"hint,omitempty"`
	Findings    []outdatedFinding `json:"findings"`
	Error       string            `json:"error,omitempty"`

	// where the module is declared, for annotations
	file       string
	line       int
	constraint string
}

type outdatedImage struct {
	Tag     string   `json:"tag,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	Digest  string   `json:"digest"`
	Version string   `json:"version,omitempty"`
	Created string   `json:"created,omitempty"`
	// Order and Rule: the upstream candidate against the locked image.
	Order string `json:"order,omitempty"`
	Rule  string `json:"rule,omitempty"`
}

type outdatedRunning struct {
	Host      string `json:"host"`
	Container string `json:"container"`
	Tag       string `json:"tag,omitempty"`
	Digest    string `json:"digest,omitempty"`
	ImageID   string `json:"image_id,omitempty"`
	Version   string `json:"version,omitempty"`
	Created   string `json:"created,omitempty"`
	// State is the container's state; Replicas and Pods, on Kubernetes,
	// how many pods of the workload run this image, and which.
	State    string   `json:"state,omitempty"`
	Replicas int      `json:"replicas,omitempty"`
	Pods     []string `json:"pods,omitempty"`
	// Order and Rule: the running image against the locked one.
	Order string `json:"order,omitempty"`
	Rule  string `json:"rule,omitempty"`
}

type outdatedFinding struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func outdatedReport(reports []*resolve.ModuleStatus, o *outdatedOptions, failOn []resolve.Status) outdatedOutput {
	out := outdatedOutput{Schema: JSONSchema, Command: "outdated", Catalogue: o.Catalogue, Lock: o.Lock, FailOn: statusStrings(failOn), Modules: []outdatedModule{}}
	for _, r := range reports {
		m := outdatedModule{Name: r.Module.Name, Policy: string(r.Module.Policy), Statuses: statusStrings(r.Statuses), Missing: r.Missing, Hint: r.Hint,
			Running: []outdatedRunning{}, Findings: []outdatedFinding{},
			file: r.Module.DeclRange.Filename, line: r.Module.DeclRange.Start.Line, constraint: r.Module.ConstraintText}
		if l := r.Locked; l != nil {
			m.Locked = &outdatedImage{Tag: l.Tag, Tags: l.Tags, Digest: l.Digest, Version: l.Version, Created: resolve.Created(l.Created)}
		}
		for _, rs := range r.Running {
			run := outdatedRunning{Host: rs.Host, Container: rs.Container, Tag: rs.Image.Tag, Digest: rs.Image.Digest, ImageID: rs.Image.ImageID,
				State: rs.State, Replicas: rs.Replicas, Pods: rs.Pods,
				Version: rs.Version, Created: resolve.Created(rs.Created)}
			if r.Locked != nil {
				run.Order, run.Rule = rs.Order.Cmp.String(), string(rs.Order.Rule)
			}
			m.Running = append(m.Running, run)
		}
		if u := r.Upstream; u != nil {
			m.Upstream = &outdatedImage{Tag: u.Image.Tag, Digest: u.Image.Digest, Version: u.Version, Created: resolve.Created(u.Created)}
			if r.Locked != nil {
				m.Upstream.Order, m.Upstream.Rule = u.Order.Cmp.String(), string(u.Order.Rule)
			}
		}
		for _, f := range r.Findings {
			m.Findings = append(m.Findings, outdatedFinding{Status: string(f.Status), Message: f.Message})
		}
		if len(r.Failures) > 0 {
			m.Error = errors.Join(r.Failures...).Error()
		}
		out.Failed = out.Failed || len(failingStatuses(m.Statuses, failOn)) > 0
		out.Modules = append(out.Modules, m)
	}
	return out
}

// label names the module for people: "app", or "app (production)".
func (m outdatedModule) label() string {
	if m.Environment == "" {
		return m.Name
	}
	return m.Name + " (" + m.Environment + ")"
}

func statusStrings(ss []resolve.Status) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, string(s))
	}
	return out
}

func failingStatuses(statuses []string, failOn []resolve.Status) []string {
	var hit []string
	for _, st := range statuses {
		if slices.Contains(failOn, resolve.Status(st)) {
			hit = append(hit, st)
		}
	}
	return hit
}
