# Mistakes in environments' require lists, all found in one run.
host "s1" {
  snapshot = "s1.json"
}
host "p1" {
  snapshot = "p1.json"
}
host "p2" {
  snapshot = "p2.json"
}
host "p3" {
  snapshot = "p3.json"
}

environment "staging" {
  hosts   = ["s1"]
  require = ["running"] # ERROR: require without from
}

environment "production" {
  hosts   = ["p1"]
  from    = "staging"
  require = ["running", "green"] # ERROR: Invalid requirement
}

environment "eu" {
  hosts   = ["p2"]
  from    = "staging"
  require = ["healthy", "ready"] # ERROR: require without running
}

environment "us" {
  hosts   = ["p3"]
  from    = "staging"
  require = ["running", "ready", "running"] # ERROR: Duplicate requirement
}
