package create

// For the tests that run the whole command line (package create_test).
const DeploymentYAML = deploymentYAML

var IndentYAML = indentYAML
