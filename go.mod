module github.com/connectd/connectd

go 1.26
