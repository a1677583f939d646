print("ustore")
