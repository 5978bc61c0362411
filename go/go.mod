module github.com/clawpatrol/sandbox-host/go

go 1.19
