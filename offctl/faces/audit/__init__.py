"""`offctl audit`: the Spark job (job), the functions its tasks run (tasks), and spark-submit's entry script."""
