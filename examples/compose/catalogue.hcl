# The host the stack runs on. "pin init" adds the modules.
host "dock" {
  docker = "unix:///var/run/docker.sock"
}

# Where the deploy reads the lock: "pin export" writes compose.pin.yaml
# beside compose.yaml, and "pin propose" commits it with the lock.
export {
  compose {
    files        = ["compose.yaml"]
    project_name = "stack"
  }
}
