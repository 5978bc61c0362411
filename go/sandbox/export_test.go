package sandbox

// Internals the external tests check.
var DefaultLauncherSocket = defaultLauncherSocket

func Stage1Called() bool { return stage1Called.Load() }

func ForgetStage1() { stage1Called.Store(false) }
