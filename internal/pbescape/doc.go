// Package pbescape holds what the code protoc-gen-go-escape generates
// calls to replace every string of a message, at any depth, by an
// escaped form: list elements, map keys and map values.
//
// Why it exists: the CLI escapes every string of every reply before it
// prints it (a name holding ESC must show as \x1b, not clear the screen).
// It did so through protobuf reflection, and the reflection of the API's
// messages is built lazily, on the first use in a process: for one
// `longfair submit` from a shell that was 1 to 10 ms of a 45 ms call,
// more than the time to parse its flags and dial. The generated
// EscapeStrings methods reach the same strings from the Go fields
// directly.
package pbescape
