// Package authz is pin's Docker Engine authorization plugin ("pin authz"):
// the Engine's authz plugin protocol (Plugin.Activate,
// AuthZPlugin.AuthZReq, AuthZPlugin.AuthZRes, JSON over HTTP on a unix
// socket). It judges every call that can put an image under a name a
// module covers, names compared as the Engine stores them (one leading
// "/" or none):
//
//   - POST /containers/create, when the new container takes over one that
//     a module covers — the same container name, a pin.module label, a
//     runs_on container name, or Compose's com.docker.compose.project and
//     .service labels (Compose renames the container it replaces before
//     it creates the new one);
//   - POST /containers/{id}/rename, judged as a create under the new name
//     for the modules the new name adds;
//   - POST /services/create and /services/{id}/update (swarm), by the
//     tasks' container labels, before or after the update, and the spec a
//     rollback restores.
//
// The image is read from the Engine's store first (Engine): what will run,
// whether the request names it by an image ID or by a tag moved on the
// Engine. It is held against what that module's containers on the Engine
// run and what the lock names (package enforce, resolve.Judge), and a
// downgrade or an unknown order is denied with resolve's refusal, unless
// the container is labelled pin.dev/allow-downgrade (and pin.dev/restore
// for a one_way module). Everything else is allowed; responses are always
// allowed.
//
// What it cannot decide because pin cannot work (the Engine or a registry
// failing, the time budget spent) is denied, or allowed with FailOpen;
// what a request hides (a create whose body the Engine does not pass to
// plugins) is denied either way. All is logged. What the Engine does when
// the plugin does not answer is the Engine's: it fails every request,
// /_ping too, with HTTP 500 after about 32 s of retries, until the plugin
// is back (docs/reference.md).
//
// It reads the Engine through the catalogue's Docker host adapter, over
// the Engine's API, as any client: those requests come back to the plugin
// and are allowed. It does not install itself: dockerd finds it by name
// (--authorization-plugin=NAME) in /run/docker/plugins or
// /etc/docker/plugins.
package authz
