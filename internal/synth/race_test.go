//go:build race

package synth

// raceEnabled is set in race-instrumented test binaries. Such a binary,
// started as a capsule process, cannot map its shadow memory under
// RLIMIT_AS and runs several times slower, so the limits it reports are
// not the ones a real capsule process would.
const raceEnabled = true
