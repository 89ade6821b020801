package main

// The JVM seed experiment registers itself as the lab scenario "jvm"
// (latscope-lab jvm, docs/lab-jvm.md).
import _ "github.com/latscope/latscope/lab/jvm"
