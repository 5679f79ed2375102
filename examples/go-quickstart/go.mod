module example.com/go-quickstart

go 1.25
