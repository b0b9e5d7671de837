# Mistakes in environment blocks. Each "ERROR:" comment names the summary
# of the diagnostic expected on its line, all found in one run.
host "s1" {
  snapshot = "s1.json"
}
host "s2" {
  snapshot = "s2.json"
}
host "p1" {
  snapshot = "p1.json"
}
host "lost" { # ERROR: Host in no environment
  snapshot = "lost.json"
}

environment "staging" {
  hosts = ["s1", "s2", "s1"] # ERROR: Duplicate host in environment
}

environment "production" {
  hosts = ["p1", "s2"] # ERROR: Host in two environments
  from  = "staging"
  soak  = "a day" # ERROR: Invalid soak
}

environment "production" { # ERROR: Duplicate environment
  hosts = []
}

environment "qa" {
  hosts = ["nowhere"] # ERROR: Undefined host
  from  = "qa" # ERROR: Environment promotes from itself
}

environment "dev" {
  hosts = []
  from  = "sandbox" # ERROR: Undefined environment
  soak  = "-1h" # ERROR: Invalid soak
}

environment "a" {
  hosts = []
  from  = "b" # ERROR: Cyclic promotion
}

environment "b" {
  hosts = []
  from  = "a" # ERROR: Cyclic promotion
}

environment "c" {
  hosts = []
  soak  = "24h" # ERROR: soak without from
}

environment "Prod.EU" { # ERROR: Invalid environment name
  hosts = []
}

environment "e" { # ERROR: Missing required argument
  from = "c"
}

environment "f" {
  hosts = "s1" # ERROR: Invalid value
}

module "app" {
  image  = "registry.example.org/app"
  policy = "at-least-running"
  pin    = "1.0.0"
  runs_on "s1" { container = "app" }
}
