module authrim/load-testing/cimd-docs

go 1.22
