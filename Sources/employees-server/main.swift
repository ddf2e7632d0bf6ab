print("employees-server: not built yet")
